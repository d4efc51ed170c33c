// The shapes of the module registry on the public API, defined once: the tRPC procedures
// (server/trpc/routers/modules.ts) declare them, REST and the OpenAPI document follow, lib/client, the
// CLI (`planton module …`) and Settings → Modules take their types from them.
import { z } from "zod";
import { PROVISIONERS } from "../catalog";
import { MODULE_LIMITS, MODULE_SCOPES, MODULE_SOURCE_KINDS } from "../modules";
import { timestamp } from "./schemas";

export { MODULE_RULES, MODULE_SCOPES, MODULE_SOURCE_KINDS, type ModuleRule } from "../modules";

const MODULE_NAME = /^[a-z][a-z0-9-]{1,62}$/;
/** Semantic versions: 1.2.3, 1.2.3-rc.1 (no leading v, no build metadata: a version names one bundle). */
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
const KIND = /^[A-Z][A-Za-z0-9]{1,62}$/;

export const moduleNameSchema = z
  .string()
  .trim()
  .regex(MODULE_NAME, { error: "Module name must be 2–63 lower-case letters, digits and dashes, starting with a letter (e.g. s3-bucket)" })
  .meta({ description: "The module's name, e.g. s3-bucket" });
export const moduleVersionStringSchema = z
  .string()
  .trim()
  .regex(SEMVER, { error: "Version must be a semantic version like 1.4.0 or 2.0.0-rc.1" })
  .meta({ description: "A semantic version, e.g. 1.4.0" });
export const kindNameSchema = z
  .string()
  .trim()
  .regex(KIND, { error: "Kind must be 2–63 letters and digits in PascalCase, starting with a capital letter (e.g. TeamBucket)" })
  .meta({ description: "The catalog kind the module provisions (an existing one, or a new kind of the organization's own)" });

/** `name@version`: what a component pins (create/update `module`) and what the CLI takes. */
export const moduleRefSchema = z
  .string()
  .trim()
  .regex(/^[a-z][a-z0-9-]{1,62}@\S+$/, { error: "Module must be name@version, e.g. s3-bucket@1.4.0 (or null to follow the registry's latest for the kind)" })
  .meta({ description: "A registered module version as name@version" });

// ── What the API answers ────────────────────────────────────────────────────────────────────────

export const moduleInputSchema = z
  .object({
    name: z.string(),
    type: z.string().meta({ description: "The HCL type the variable declares (`string`, `list(string)`, `any` when it declares none)" }),
    kind: z.enum(["string", "number", "boolean", "json"]).meta({ description: "The spec field's type: json for lists, maps, sets, tuples, objects and any" }),
    default: z.unknown().optional().meta({ description: "The default value (absent when it has none: then it is required)" }),
    description: z.string(),
    sensitive: z.boolean(),
    required: z.boolean(),
    validations: z.array(z.object({ condition: z.string(), errorMessage: z.string() })),
    file: z.string().meta({ description: "The file declaring it, within the bundle" }),
    line: z.number().int(),
  })
  .meta({ id: "ModuleInput" });

export const moduleSourceSchema = z
  .object({
    kind: z.enum(MODULE_SOURCE_KINDS),
    url: z.string().nullable().meta({ description: "git: the repository's URL" }),
    ref: z.string().nullable().meta({ description: "git: the branch, tag or commit asked for" }),
    commit: z.string().nullable().meta({ description: "git: the commit the ref resolved to at registration" }),
    path: z.string().nullable().meta({ description: "git: the subfolder; builtin: the folder the platform ships it in" }),
    archiveName: z.string().nullable().meta({ description: "archive: the uploaded file's name" }),
  })
  .meta({ id: "ModuleSource" });

export const moduleUserSchema = z.object({ id: z.string(), name: z.string(), environment: z.string() }).meta({ id: "ModuleUser" });

export const moduleVersionSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    version: z.string(),
    kind: z.string(),
    provisioner: z.enum(PROVISIONERS),
    scope: z.enum(MODULE_SCOPES),
    source: moduleSourceSchema,
    sha256: z.string().nullable().meta({ description: "The bundle's SHA-256 (lib/module-bundle.ts), which the job records and the runner checks" }),
    size: z.number().int().meta({ description: "Bytes of all its files" }),
    fileCount: z.number().int(),
    inputs: z.array(moduleInputSchema),
    readme: z.string().meta({ description: "Its README.md, if the bundle has one" }),
    registeredBy: z.string().meta({ description: "Who registered it ('system' for the platform's)" }),
    createdAt: timestamp,
    usedBy: z.array(moduleUserSchema).meta({ description: "Components that run it now: pinned to it, or following the latest that it is" }),
  })
  .meta({ id: "ModuleVersion" });

export const moduleRowSchema = z
  .object({
    name: z.string(),
    kind: z.string(),
    provisioner: z.enum(PROVISIONERS),
    scope: z.enum(MODULE_SCOPES),
    latestVersion: z.string(),
    versionCount: z.number().int(),
    componentsUsing: z.number().int().meta({ description: "Components that run one of its versions now" }),
  })
  .meta({ id: "ModuleRow" });

export const modulePolicySchema = z
  .object({ engineersMayRegister: z.boolean().meta({ description: "Whether engineers may register module versions (admins always may)" }) })
  .meta({ id: "ModulePolicy" });

/** GET /modules: the organization's modules and the platform's, the policy, and whether the caller may register. */
export const moduleListSchema = z
  .object({
    modules: z.array(moduleRowSchema),
    policy: modulePolicySchema,
    mayRegister: z.boolean().meta({ description: "Whether the caller may register a version now" }),
  })
  .meta({ id: "ModuleList" });

export const moduleVersionListSchema = z
  .object({ name: z.string(), versions: z.array(moduleVersionSchema).meta({ description: "Newest first" }) })
  .meta({ id: "ModuleVersionList" });

// ── What scripts send ───────────────────────────────────────────────────────────────────────────

/** GET /modules */
export const listModulesInput = z.object({ kind: z.string().trim().min(1).optional().meta({ description: "Only the modules for this catalog kind" }) });

/** GET /modules/{name}: its latest version; GET /modules/{name}/versions/{version}: that one. */
export const moduleRefInput = z.object({ name: moduleNameSchema });
export const moduleVersionInput = z.object({ name: moduleNameSchema, version: z.string().trim().min(1).max(100).meta({ description: "The version, e.g. 1.4.0" }) });

export const gitSourceBody = z.object({
  type: z.literal("git"),
  url: z.string().trim().min(1, { error: "Give the repository's URL (https://…, ssh://…, git@host:path, or file:// under a folder the operator allows)" }).max(2000),
  ref: z.string().trim().min(1, { error: "Give a branch, tag or commit to register" }).max(250),
  path: z.string().trim().max(500).optional().meta({ description: "The module's subfolder in the repository (its root when left out)" }),
});

export const archiveSourceBody = z.object({
  type: z.literal("archive"),
  fileName: z
    .string()
    .trim()
    .regex(/\.(tar\.gz|tgz|zip)$/i, { error: "The archive must be a .tar.gz, .tgz or .zip file" })
    .max(255),
  contentBase64: z
    .string()
    .min(1, { error: "The archive is empty" })
    .max(Math.ceil(MODULE_LIMITS.archiveBytes / 3) * 4, { error: `The archive must be at most ${MODULE_LIMITS.archiveBytes / 1024} KiB compressed; register a larger module from git` })
    .meta({ description: "The .tar.gz or .zip file, base64-encoded" }),
});

/** POST /modules */
export const registerModuleBody = z.object({
  name: moduleNameSchema,
  version: moduleVersionStringSchema,
  kind: kindNameSchema,
  provisioner: z.enum(PROVISIONERS, { error: `Provisioner must be one of ${PROVISIONERS.join(", ")}` }),
  title: z.string().trim().min(1).max(100).optional().meta({ description: "A new kind's title (default: the kind's name in words)" }),
  description: z.string().trim().max(500).optional().meta({ description: "A new kind's description" }),
  provider: z
    .string()
    .trim()
    .min(1)
    .max(40)
    .optional()
    .meta({ description: "A new kind's connection provider (local, aws, gcp, azure, …); derived from the module's providers when left out" }),
  source: z.discriminatedUnion("type", [gitSourceBody, archiveSourceBody], { error: 'source.type must be "git" or "archive"' }),
});

/** PUT /modules/policy */
export const modulePolicyBody = z.object({ engineersMayRegister: z.boolean() });

export type ModuleVersion = z.infer<typeof moduleVersionSchema>;
export type ModuleRow = z.infer<typeof moduleRowSchema>;
export type ModuleInput = z.infer<typeof moduleInputSchema>;
export type RegisterModuleBody = z.input<typeof registerModuleBody>;
