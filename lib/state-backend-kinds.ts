// The state backend kinds, defined once: what each one's configuration holds, which connection its
// credentials come from, and which provisioners can keep state there. The server validates with it,
// the console draws its form from it, the CLI lists it in usage. Implementations: state-backends/.
import { z } from "zod";
import { fieldsSchema, PROVISIONERS, URL_FIELD, withoutUserinfo, type Provisioner, type SpecField } from "./catalog";
import { nameSchema } from "./names";

export { PROVISIONERS, type Provisioner };

export interface StateBackendKindDef {
  title: string;
  description: string;
  /** Fields of the backend's own configuration (never a credential). */
  configFields: SpecField[];
  /** The connection provider its credentials come from; null when it needs none. */
  connectionProvider: string | null;
  /** Provisioners whose state it can keep. */
  provisioners: readonly Provisioner[];
  /** Whether an admin can create one (planton_managed always exists, one per organization). */
  creatable: boolean;
}

const TOFU_LIKE: readonly Provisioner[] = ["builtin", "tofu", "terraform"];
/**
 * A store of bytes keeps every engine's state: OpenTofu's state files and Pulumi's checkpoints alike (a Pulumi job's
 * stack is imported from and exported to it through the runner API; Pulumi's own DIY backends are these same stores).
 */
const ANY_ENGINE: readonly Provisioner[] = PROVISIONERS;
const KEY_PREFIX: SpecField = { name: "key_prefix", type: "string", default: "", description: "Keys are stored under this prefix, e.g. planton/." };

export const STATE_BACKEND_KINDS = {
  planton_managed: {
    title: "Planton-managed",
    description: "Kept in the console's own database, with every version; reachable by Planton-hosted runners only.",
    configFields: [],
    connectionProvider: null,
    provisioners: PROVISIONERS,
    creatable: false,
  },
  local: {
    title: "Local directory",
    description: "State files in a directory on the server's host (for self-hosted setups), locked with a .lock.info file as OpenTofu's local backend does.",
    configFields: [{ name: "path", type: "string", required: true, description: "Absolute path of the directory, under the organization's own folder in the console's data folder (<data folder>/local-states/<organization id>) or under a folder the console's operator allows (PLANTON_STATE_LOCAL_ROOTS); created (owner-only) when missing.", pattern: "^/", patternHint: "an absolute path" }],
    connectionProvider: null,
    provisioners: ANY_ENGINE,
    creatable: true,
  },
  postgres: {
    title: "PostgreSQL",
    description: "OpenTofu's pg backend layout: a schema with a states table, locked with advisory locks.",
    configFields: [{ name: "schema_name", type: "string", default: "terraform_remote_state", description: "The schema holding the states table.", pattern: "^[a-z_][a-z0-9_]{0,62}$", patternHint: "a lower-case SQL identifier" }],
    connectionProvider: "postgres",
    provisioners: ANY_ENGINE,
    creatable: true,
  },
  s3: {
    title: "Amazon S3",
    description: "Objects in an S3 bucket (or an S3-compatible server), locked with <key>.tflock by conditional write as OpenTofu's use_lockfile does.",
    configFields: [
      { name: "bucket", type: "string", required: true, description: "The bucket name.", pattern: "^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", patternHint: "3–63 lower-case letters, digits, dots and dashes" },
      KEY_PREFIX,
      { name: "region", type: "string", default: "", description: "The bucket's region; the connection's region when empty." },
      { name: "endpoint", type: "string", default: "", description: "A custom endpoint for an S3-compatible server (MinIO, s3rver); requests then go path-style.", ...URL_FIELD },
    ],
    connectionProvider: "aws",
    provisioners: ANY_ENGINE,
    creatable: true,
  },
  r2: {
    title: "Cloudflare R2",
    description: "Objects in an R2 bucket over its S3-compatible API, locked as the S3 kind is.",
    configFields: [
      { name: "bucket", type: "string", required: true, description: "The bucket name.", pattern: "^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$", patternHint: "3–63 lower-case letters, digits and dashes" },
      KEY_PREFIX,
      { name: "endpoint", type: "string", default: "", description: "Overrides https://<account_id>.r2.cloudflarestorage.com (a jurisdiction's endpoint).", ...URL_FIELD },
    ],
    connectionProvider: "r2",
    provisioners: ANY_ENGINE,
    creatable: true,
  },
  azure_blob: {
    title: "Azure Blob Storage",
    description: "Blobs in a storage container, locked with a blob lease as OpenTofu's azurerm backend does.",
    configFields: [
      { name: "container_name", type: "string", required: true, description: "The container.", pattern: "^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){2,62}$", patternHint: "3–63 lower-case letters, digits and single dashes" },
      KEY_PREFIX,
      { name: "endpoint", type: "string", default: "", description: "The blob service URL when not https://<account>.blob.core.windows.net (Azurite, sovereign clouds).", ...URL_FIELD },
    ],
    connectionProvider: "azure_storage",
    provisioners: ANY_ENGINE,
    creatable: true,
  },
  gcs: {
    title: "Google Cloud Storage",
    description: "Objects in a GCS bucket, locked with a .tflock object created only if absent, as OpenTofu's gcs backend does.",
    configFields: [
      { name: "bucket", type: "string", required: true, description: "The bucket name.", pattern: "^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$", patternHint: "3–63 lower-case letters, digits, dots, dashes and underscores" },
      KEY_PREFIX,
      { name: "endpoint", type: "string", default: "", description: "The JSON API's origin when not https://storage.googleapis.com (a private endpoint, or a GCS emulator).", ...URL_FIELD },
    ],
    connectionProvider: "gcp",
    provisioners: ANY_ENGINE,
    creatable: true,
  },
  terraform_cloud: {
    title: "HCP Terraform / Terraform Cloud",
    description: "Each state in a workspace of an HCP Terraform organization, written as state versions and locked with the workspace lock.",
    configFields: [
      { name: "organization", type: "string", required: true, description: "The HCP Terraform organization." },
      { name: "workspace_prefix", type: "string", default: "planton-", description: "Workspaces are named <prefix><environment>-<component>." },
    ],
    connectionProvider: "terraform_cloud",
    provisioners: TOFU_LIKE,
    creatable: true,
  },
  pulumi_cloud: {
    title: "Pulumi Cloud",
    description: "Each state a stack of a Pulumi Cloud organization, written as checkpoints.",
    configFields: [
      { name: "organization", type: "string", required: true, description: "The Pulumi Cloud organization." },
      { name: "project", type: "string", default: "planton", description: "The project the stacks are created in." },
    ],
    connectionProvider: "pulumi_cloud",
    provisioners: ["pulumi"],
    creatable: true,
  },
} as const satisfies Record<string, StateBackendKindDef>;

export type StateBackendKind = keyof typeof STATE_BACKEND_KINDS;
export const STATE_BACKEND_KIND_NAMES = Object.keys(STATE_BACKEND_KINDS) as StateBackendKind[];
export const PLANTON_MANAGED_KIND = "planton_managed" satisfies StateBackendKind;

export function isStateBackendKind(kind: string): kind is StateBackendKind {
  return Object.hasOwn(STATE_BACKEND_KINDS, kind);
}

/** A backend's settings as they are answered and recorded (an address saved with credentials in it, before that was refused, hides them). */
export const shownBackendConfig = (kind: string, config: unknown) =>
  withoutUserinfo(isStateBackendKind(kind) ? (STATE_BACKEND_KINDS[kind].configFields as readonly SpecField[]) : [], (config ?? {}) as Record<string, unknown>);

/** A zod schema for a kind's configuration, with messages naming the field. */
export function backendConfigSchema(kind: StateBackendKind) {
  return fieldsSchema(STATE_BACKEND_KINDS[kind].configFields as SpecField[]);
}

/** Backend names: how they are typed on the command line and shown in the console. */
export const backendNameSchema = nameSchema("prod-s3");

/** Where a component's state lives in a backend when no move chose a key: `<environment>/<component>/terraform.tfstate`. */
export function defaultStateKey(environment: string, component: string): string {
  return `${environment}/${component}/terraform.tfstate`;
}
