// The module registry's constants, defined once: where a version's files can come from, which rule
// chose a component's module, and the limits every registered bundle is held to (the server checks
// them at registration; README "Modules and the registry" states them).
import semver from "semver";

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

/**
 * Which of two versions of a module is newer, for sorting newest first: semver order (`1.0.0` above
 * `1.0.0-rc.1`), a version that is not semver below every one that is, then the later registration.
 * The one rule for "latest": the server resolves jobs by it and the console's picker lists by it.
 */
export function newestModuleFirst(a: { version: string; createdAt: Date | string }, b: { version: string; createdAt: Date | string }): number {
  const va = semver.valid(a.version);
  const vb = semver.valid(b.version);
  const byVersion = va && vb ? semver.rcompare(va, vb) : va ? -1 : vb ? 1 : b.version.localeCompare(a.version, undefined, { numeric: true });
  return byVersion || new Date(b.createdAt).getTime() - new Date(a.createdAt).getTime();
}
