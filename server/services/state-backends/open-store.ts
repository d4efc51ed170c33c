// Opens a backend row's store on the server: the kind's implementation (state-backends/), configured
// from the row and given the credentials of the connection the row names (decrypted here, never
// stored on the backend row, never answered). Planton-managed state is a store over the database.
import { and, eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { connections, stateBackends } from "@/db/schema";
import { isStateBackendKind, STATE_BACKEND_KINDS, type StateBackendKind } from "@/lib/state-backend-kinds";
import { openGcsStore } from "@/state-backends/gcs";
import { LocalStateStore } from "@/state-backends/local";
import { PostgresStateStore } from "@/state-backends/postgres";
import { openPulumiCloudStore } from "@/state-backends/pulumi-cloud";
import { StateBackend } from "@/state-backends/rules";
import { RemoteStateError } from "@/state-backends/remote-api";
import { openTerraformCloudStore } from "@/state-backends/terraform-cloud";
import type { StateStore } from "@/state-backends/types";
import { decryptSecret } from "../../crypto";
import { PlantonError } from "../../errors";
import { localFolderFix, localFolderRefusal, localStateFolders } from "./local-folder";
import { PlantonManagedStore } from "./planton-managed-store";

// The S3 and Azure kinds load their SDKs (a second or two of imports) when such a backend is opened,
// not with every module that can open a backend.
const s3Kind = () => import("@/state-backends/s3");
const azureBlobKind = () => import("@/state-backends/azure-blob");

export type BackendRow = typeof stateBackends.$inferSelect;
type ConnectionRow = typeof connections.$inferSelect;

const text = (v: unknown) => (typeof v === "string" ? v : "");

/** A refusal to open a backend: what did not happen and the fix. */
function cannotOpen(backend: Pick<BackendRow, "name">, why: string, fix: string): PlantonError {
  return new PlantonError("PRECONDITION_FAILED", `State backend ${backend.name} could not be opened: ${why}. ${fix}.`);
}

/** The connection's credentials and config, checked against the provider the kind needs. */
async function connectionFor(db: Queryable, backend: Pick<BackendRow, "name" | "kind" | "orgId" | "connectionId">, provider: string) {
  if (!backend.connectionId) {
    throw cannotOpen(backend, `the ${backend.kind} kind takes its credentials from a ${provider} connection, and none is set`, `Create one in Settings → Connections, then set it on the backend`);
  }
  const [conn] = await db.select().from(connections).where(and(eq(connections.id, backend.connectionId), eq(connections.orgId, backend.orgId)));
  if (!conn) throw cannotOpen(backend, "its connection was deleted", "Set another connection on the backend in Settings → State Backends");
  if (conn.provider !== provider) {
    throw cannotOpen(backend, `its connection ${conn.name} is a ${conn.provider} connection, and the ${backend.kind} kind needs a ${provider} one`, "Choose a connection of that provider");
  }
  return { conn, config: (conn.config ?? {}) as Record<string, unknown>, credentials: credentialsOf(backend, conn) };
}

function credentialsOf(backend: Pick<BackendRow, "name">, conn: ConnectionRow): Record<string, string> {
  if (!conn.credentialsEncrypted) {
    throw cannotOpen(backend, `its connection ${conn.name} has no credentials stored`, `Add them in Settings → Connections → ${conn.name}`);
  }
  return JSON.parse(decryptSecret(conn.credentialsEncrypted)) as Record<string, string>;
}

/** What opening needs of a backend: a saved row, or one being tested before it is saved. */
export type BackendToOpen = Pick<BackendRow, "name" | "kind" | "orgId" | "connectionId" | "config">;

/** The kind's raw store for a backend (the caller closes it). Throws PlantonError when it cannot be opened. */
export async function openStore(db: Queryable, backend: BackendToOpen): Promise<StateStore> {
  if (!isStateBackendKind(backend.kind)) {
    throw cannotOpen(backend, `its kind ${backend.kind} is not one this server knows`, "Delete it and create it again with a known kind");
  }
  const kind: StateBackendKind = backend.kind;
  const cfg = (backend.config ?? {}) as Record<string, unknown>;
  const prefix = text(cfg.key_prefix);
  const provider = STATE_BACKEND_KINDS[kind].connectionProvider;
  switch (kind) {
    case "planton_managed":
      return new PlantonManagedStore(db, backend.orgId);
    case "local": {
      // Saved rows were checked when saved; checked again here, so one saved before the rule (or since the operator
      // narrowed PLANTON_STATE_LOCAL_ROOTS) is not opened outside the folders allowed now.
      const folders = localStateFolders(backend.orgId);
      const refused = localFolderRefusal(folders, text(cfg.path));
      if (refused) throw cannotOpen(backend, refused, localFolderFix(folders));
      return new LocalStateStore(text(cfg.path));
    }
    case "postgres": {
      const { credentials } = await connectionFor(db, backend, provider!);
      return new PostgresStateStore({ url: credentials.conn_str, schema: text(cfg.schema_name) || undefined });
    }
    case "s3": {
      const { config, credentials } = await connectionFor(db, backend, provider!);
      const { openS3Store } = await s3Kind();
      return openS3Store({
        bucket: text(cfg.bucket),
        prefix,
        region: text(cfg.region) || text(config.region) || undefined,
        endpoint: text(cfg.endpoint) || undefined,
        credentials: { accessKeyId: credentials.access_key_id, secretAccessKey: credentials.secret_access_key },
      });
    }
    case "r2": {
      const { config, credentials } = await connectionFor(db, backend, provider!);
      const { openR2Store } = await s3Kind();
      return openR2Store({
        accountId: text(config.account_id),
        bucket: text(cfg.bucket),
        prefix,
        endpoint: text(cfg.endpoint) || undefined,
        credentials: { accessKeyId: credentials.access_key_id, secretAccessKey: credentials.secret_access_key },
      });
    }
    case "azure_blob": {
      const { config, credentials } = await connectionFor(db, backend, provider!);
      const account = text(config.storage_account_name);
      const { openAzureBlobStore } = await azureBlobKind();
      return openAzureBlobStore({
        container: text(cfg.container_name),
        prefix,
        url: text(cfg.endpoint) || `https://${account}.blob.core.windows.net`,
        accountName: account,
        accountKey: credentials.access_key,
      });
    }
    case "gcs": {
      const { credentials } = await connectionFor(db, backend, provider!);
      // A key that is not a service account key is refused here, in its own words (never its content).
      try {
        return openGcsStore({ bucket: text(cfg.bucket), prefix, endpoint: text(cfg.endpoint) || undefined, serviceAccountKey: credentials.service_account_key ?? "" });
      } catch (e) {
        if (e instanceof RemoteStateError) throw new PlantonError("PRECONDITION_FAILED", `State backend ${backend.name} could not be opened. ${e.message}`);
        throw e;
      }
    }
    case "terraform_cloud": {
      const { config, credentials } = await connectionFor(db, backend, provider!);
      return openTerraformCloudStore({
        hostname: text(config.hostname) || "app.terraform.io",
        token: credentials.token,
        organization: text(cfg.organization),
        workspacePrefix: typeof cfg.workspace_prefix === "string" ? cfg.workspace_prefix : undefined,
      });
    }
    case "pulumi_cloud": {
      const { config, credentials } = await connectionFor(db, backend, provider!);
      return openPulumiCloudStore({
        apiUrl: text(config.api_url) || undefined,
        accessToken: credentials.access_token,
        organization: text(cfg.organization),
        project: text(cfg.project) || "planton",
      });
    }
    default: {
      const unknown: never = kind;
      throw cannotOpen(backend, `this server cannot reach ${String(unknown)} backends`, "Choose another kind of backend");
    }
  }
}

/** Runs `work` with the backend's store under the write rules, closing the store after. */
export async function withBackend<T>(db: Queryable, backend: BackendToOpen, work: (backend: StateBackend) => Promise<T>): Promise<T> {
  const store = await openStore(db, backend);
  try {
    return await work(new StateBackend(store));
  } finally {
    await store.close?.();
  }
}
