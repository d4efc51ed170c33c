// The module registry's constants, defined once: where a version's files can come from, which rule
// chose a component's module, and the limits every registered bundle is held to (the server checks
// them at registration; README "Modules and the registry" states them).

/** Where a version's files came from: a folder the platform ships, a git commit, an uploaded archive. */
export const MODULE_SOURCE_KINDS = ["builtin", "git", "archive"] as const;
export type ModuleSourceKind = (typeof MODULE_SOURCE_KINDS)[number];

export const MODULE_SCOPES = ["platform", "organization"] as const;

/**
 * Which rule chose a component's module (the spec's order): the component's custom module, else the
 * latest version in the organization's registry for its kind, else the platform's; none when nothing is registered.
 */
export const MODULE_RULES = ["custom", "organization", "platform", "none"] as const;
export type ModuleRule = (typeof MODULE_RULES)[number];

export const MODULE_LIMITS = {
  /** All of a bundle's files together. */
  bundleBytes: 5 * 1024 * 1024,
  /** One file. */
  fileBytes: 1024 * 1024,
  files: 1000,
  /**
   * An uploaded archive, compressed: the request carries it base64-encoded, and a request body may be
   * at most 1 MiB (lib/trpc/limits.ts). A larger module is registered from git.
   */
  archiveBytes: 512 * 1024,
  /** How long fetching a git source may take. */
  gitSeconds: 60,
} as const;

/** Folders a bundle never takes in (tool caches and VCS metadata). */
export const MODULE_SKIPPED_FOLDERS = [".git", ".terraform"] as const;

/**
 * State and plan files that may sit beside a module in a repository or on a laptop: never part of a
 * module, and they may hold secrets, so neither a registered bundle nor the engine's loader takes them in.
 */
export const isStateOrPlanFile = (name: string): boolean => /\.tfstate(\.backup)?$|\.tfplan$/.test(name);
