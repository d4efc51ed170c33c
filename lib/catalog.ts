// The platform catalog: kinds, the fields of their specs, and the modules that provision them.
import { z } from "zod";

/** A JSON value: what a `json` field (an HCL list, map, object or any) holds. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * Addresses in a connection's or a backend's settings carry no user name or password: settings are shown to every
 * member of the organization, and credentials belong in a connection's secret fields (kept encrypted, never answered).
 */
const NO_USERINFO = "(credentials go in the connection's secret fields)";
/** An http:// or https:// URL. */
export const URL_FIELD = { pattern: "^https?://[^\\s/@]+(?:/\\S*)?$", patternHint: `an http:// or https:// URL with no user name or password in it ${NO_USERINFO}` } as const;
/** A host name (with a port), or an http(s) URL. */
export const HOST_FIELD = { pattern: "^(?:https?://)?[^\\s/@]+(?:/\\S*)?$", patternHint: `a host name or an http(s):// URL with no user name or password in it ${NO_USERINFO}` } as const;

/** A user name and password at the start of an address (scheme optional), up to the "@" before the first "/". */
const USERINFO = /^((?:https?:\/\/)?)[^\s/]*@/;

/**
 * `config` as it may be shown or recorded: an address field (URL_FIELD, HOST_FIELD) saved with a user name or password
 * in it — before those fields refused one — shows "***" in their place. Settings are answered to every member and kept
 * in audit changes; saving such a row again is refused until the address is fixed.
 */
export function withoutUserinfo(fields: readonly Pick<SpecField, "name" | "pattern">[], config: Record<string, unknown>): Record<string, unknown> {
  let shown: Record<string, unknown> | null = null;
  for (const f of fields) {
    if (f.pattern !== URL_FIELD.pattern && f.pattern !== HOST_FIELD.pattern) continue;
    const v = config[f.name];
    if (typeof v === "string" && USERINFO.test(v)) (shown ??= { ...config })[f.name] = v.replace(USERINFO, "$1***@");
  }
  return shown ?? config;
}

export interface SpecField {
  name: string;
  /** `json`: an HCL list, map, set, tuple, object or `any` input, entered as JSON (its HCL type in `hclType`). */
  type: "string" | "number" | "boolean" | "json";
  required?: boolean;
  default?: JsonValue;
  description: string;
  /** The HCL type a module's `variable` declares (`list(string)`, `map(number)`, …), for fields derived from a module. */
  hclType?: string;
  /** A `sensitive` variable: the form masks it; put secrets in as `$secret/NAME` references. */
  sensitive?: boolean;
  /** The module's `validation` blocks, checked with the variable's value when the spec is saved. */
  validations?: { condition: string; errorMessage: string }[];
  pattern?: string;
  patternHint?: string;
  min?: number;
  max?: number;
}

/** The provisioners a module can run with, defined once. */
export const PROVISIONERS = ["builtin", "tofu", "terraform", "pulumi"] as const;
export type Provisioner = (typeof PROVISIONERS)[number];

export interface CatalogKindDef {
  kind: string;
  title: string;
  description: string;
  provider: string;
  fields: SpecField[];
  module?: { name: string; provisioner: Provisioner; version: string; source: string };
}

const SLUG = { pattern: "^[a-z][a-z0-9-]{1,40}$", patternHint: "lower-case letters, digits and dashes, starting with a letter" };

export const PLATFORM_CATALOG: CatalogKindDef[] = [
  {
    kind: "StaticSite",
    title: "Static site",
    description: "A static website published as files under the connection's folder, with a generated name suffix.",
    provider: "local",
    fields: [
      { name: "site_name", type: "string", required: true, description: "Name of the site; its folder is sites/<name>-<suffix>.", ...SLUG },
      { name: "title", type: "string", default: "Hello from Planton", description: "Title shown on the index page." },
      { name: "page_count", type: "number", default: 2, min: 1, max: 20, description: "How many content pages to publish." },
    ],
    module: { name: "static-site", provisioner: "builtin", version: "1.0.0", source: "catalog/modules/static-site" },
  },
  {
    kind: "DatabaseCredentials",
    title: "Database credentials",
    description: "A generated database password, kept in the secret store, and a config file that references it.",
    provider: "local",
    fields: [
      { name: "database_name", type: "string", required: true, description: "Name of the database the credentials are for.", ...SLUG },
      { name: "username", type: "string", default: "app", description: "The database user.", ...SLUG },
    ],
    module: { name: "database-credentials", provisioner: "builtin", version: "1.0.0", source: "catalog/modules/database-credentials" },
  },
  {
    kind: "AwsS3Bucket",
    title: "AWS S3 bucket",
    description: "An S3 bucket with versioning, provisioned with OpenTofu through an AWS connection.",
    provider: "aws",
    fields: [
      { name: "bucket_name", type: "string", required: true, description: "Globally unique bucket name.", pattern: "^[a-z0-9][a-z0-9.-]{2,62}$", patternHint: "3–63 lower-case letters, digits, dots and dashes" },
      { name: "versioning", type: "boolean", default: true, description: "Keep every version of each object." },
    ],
    module: { name: "aws-s3-bucket", provisioner: "tofu", version: "1.0.0", source: "catalog/modules/aws-s3-bucket" },
  },
];

export interface ConnectionProviderDef {
  title: string;
  configFields: SpecField[];
  credentialFields: SpecField[];
  /**
   * How the engine gets the connection: config and credential field → environment variable, set only
   * in the engine process's environment (never on disk). A `runner`-mode connection's runner has
   * these variables in its own environment instead.
   */
  env?: Record<string, string>;
}

export const CONNECTION_PROVIDERS: Record<string, ConnectionProviderDef> = {
  local: {
    title: "Local files",
    configFields: [{ name: "root", type: "string", required: true, description: "Folder on the runner host that resources are created under." }],
    credentialFields: [],
  },
  aws: {
    title: "AWS",
    configFields: [{ name: "region", type: "string", required: true, description: "Default region, e.g. us-east-1." }],
    credentialFields: [
      { name: "access_key_id", type: "string", required: true, description: "Access key id." },
      { name: "secret_access_key", type: "string", required: true, description: "Secret access key." },
    ],
    env: { region: "AWS_REGION", access_key_id: "AWS_ACCESS_KEY_ID", secret_access_key: "AWS_SECRET_ACCESS_KEY" },
  },
  gcp: {
    title: "Google Cloud",
    configFields: [{ name: "project", type: "string", required: true, description: "Project id." }],
    credentialFields: [{ name: "service_account_key", type: "string", required: true, description: "Service account key JSON." }],
    env: { project: "GOOGLE_PROJECT", service_account_key: "GOOGLE_CREDENTIALS" },
  },
  azure: {
    title: "Azure",
    configFields: [{ name: "subscription_id", type: "string", required: true, description: "Subscription id." }],
    credentialFields: [
      { name: "client_id", type: "string", required: true, description: "Client id." },
      { name: "client_secret", type: "string", required: true, description: "Client secret." },
      { name: "tenant_id", type: "string", required: true, description: "Tenant id." },
    ],
    env: { subscription_id: "ARM_SUBSCRIPTION_ID", client_id: "ARM_CLIENT_ID", client_secret: "ARM_CLIENT_SECRET", tenant_id: "ARM_TENANT_ID" },
  },
  postgres: {
    title: "PostgreSQL (state backend)",
    configFields: [],
    credentialFields: [{ name: "conn_str", type: "string", required: true, description: "A postgres:// connection URL with the user and password the state backend uses." }],
    env: { conn_str: "PG_CONN_STR" },
  },
  r2: {
    title: "Cloudflare R2 (state backend)",
    configFields: [{ name: "account_id", type: "string", required: true, description: "The Cloudflare account id (the endpoint is https://<account_id>.r2.cloudflarestorage.com)." }],
    credentialFields: [
      { name: "access_key_id", type: "string", required: true, description: "R2 API token's access key id." },
      { name: "secret_access_key", type: "string", required: true, description: "R2 API token's secret access key." },
    ],
    env: { account_id: "CLOUDFLARE_ACCOUNT_ID", access_key_id: "AWS_ACCESS_KEY_ID", secret_access_key: "AWS_SECRET_ACCESS_KEY" },
  },
  azure_storage: {
    title: "Azure Storage account (state backend)",
    configFields: [{ name: "storage_account_name", type: "string", required: true, description: "The storage account's name." }],
    credentialFields: [{ name: "access_key", type: "string", required: true, description: "One of the storage account's access keys." }],
    env: { storage_account_name: "ARM_STORAGE_ACCOUNT_NAME", access_key: "ARM_ACCESS_KEY" },
  },
  terraform_cloud: {
    title: "HCP Terraform / Terraform Cloud (state backend)",
    configFields: [{ name: "hostname", type: "string", default: "app.terraform.io", description: "The HCP Terraform or Terraform Enterprise host.", ...HOST_FIELD }],
    credentialFields: [{ name: "token", type: "string", required: true, description: "A team or user API token that can read and write state versions." }],
  },
  pulumi_cloud: {
    title: "Pulumi Cloud (state backend)",
    configFields: [{ name: "api_url", type: "string", default: "https://api.pulumi.com", description: "The Pulumi Cloud API.", ...URL_FIELD }],
    credentialFields: [{ name: "access_token", type: "string", required: true, description: "A Pulumi access token." }],
    env: { api_url: "PULUMI_BACKEND_URL", access_token: "PULUMI_ACCESS_TOKEN" },
  },
};

/** A connection's settings as they are answered and recorded (an address saved with credentials in it, before that was refused, hides them). */
export const shownConnectionConfig = (provider: string, config: unknown) => withoutUserinfo(CONNECTION_PROVIDERS[provider]?.configFields ?? [], (config ?? {}) as Record<string, unknown>);

/** A zod schema for a set of fields, with messages that name the field and what it accepts. */
export function fieldsSchema(fields: SpecField[]) {
  const shape: Record<string, z.ZodType> = {};
  for (const f of fields) {
    let s: z.ZodType;
    if (f.type === "string") {
      let str = z.string({ error: `${f.name} must be text` });
      if (f.required) str = str.min(1, { error: `${f.name} is required: ${f.description}` });
      if (f.pattern) str = str.regex(new RegExp(f.pattern), { error: `${f.name} must be ${f.patternHint ?? `like ${f.pattern}`}` });
      s = str;
    } else if (f.type === "number") {
      let num = z.number({ error: `${f.name} must be a number` });
      if (f.min !== undefined) num = num.min(f.min, { error: `${f.name} must be at least ${f.min}` });
      if (f.max !== undefined) num = num.max(f.max, { error: `${f.name} must be at most ${f.max}` });
      s = num;
    } else if (f.type === "boolean") {
      s = z.boolean({ error: `${f.name} must be true or false` });
    } else {
      s = z.json({ error: `${f.name} must be a JSON value${f.hclType ? ` of type ${f.hclType}` : ""}` });
    }
    shape[f.name] = f.required ? s : s.optional();
  }
  return z.strictObject(shape, { error: (iss) => (iss.code === "unrecognized_keys" ? `Unknown field ${iss.keys.join(", ")}; this kind accepts ${fields.map((f) => f.name).join(", ")}` : undefined) });
}

/** Fills defaults so the stored spec says every value the module will get. */
export function withDefaults(fields: SpecField[], spec: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (spec[f.name] !== undefined) out[f.name] = spec[f.name];
    else if (f.default !== undefined) out[f.name] = f.default;
  }
  return out;
}
