// What the State tab shows: where a component's state lives, its identity, lock and resources.
import { and, eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { infraComponents, stateBackends, stateObjects } from "@/db/schema";
import { SENSITIVE_VALUE } from "@/lib/secrets";
import { notFound } from "../../errors";
import { openStore } from "../state-backends/open-store";
import { accessErrorSentence } from "../state-backends/access-test";
import { servedComponents } from "../state-backends/served";
import { isPulumiCheckpoint } from "@/state-backends/rules";
import { PLANTON_MANAGED_KIND } from "@/lib/state-backend-kinds";
import type { StateFormat } from "@/lib/api/state-schemas";

export interface StateV4Doc {
  serial?: number;
  lineage?: string;
  terraform_version?: string;
  outputs?: Record<string, { value: unknown; type?: unknown; sensitive?: boolean }>;
  resources?: {
    mode: string;
    type: string;
    name: string;
    provider: string;
    instances: { attributes?: Record<string, unknown>; sensitive_attributes?: { type: string; value: string }[][] }[];
  }[];
}

export type StateInstance = NonNullable<StateV4Doc["resources"]>[number]["instances"][number];

/** The one masking rule: a top-level attribute is sensitive when any sensitive path the state records starts at it. */
export function isSensitiveAttribute(instance: StateInstance | undefined, name: string): boolean {
  return !!instance?.sensitive_attributes?.some((p) => p[0]?.value === name);
}

/** The first instance's id, unless the state marks it sensitive (a generated password can be its own id). */
function shownId(instance: StateInstance | undefined): string | null {
  const id = instance?.attributes?.id;
  if (typeof id !== "string") return null;
  return isSensitiveAttribute(instance, "id") ? SENSITIVE_VALUE : id;
}

/** One resource of a state, read the same way from an OpenTofu v4 state and a Pulumi checkpoint. */
export interface StateResource {
  /** OpenTofu's address (module.x.type.name, data.type.name), or the Pulumi resource's URN. */
  address: string;
  managed: boolean;
  type: string;
  provider: string;
  instances: (StateInstance & { index_key?: string | number })[];
}

/** What a state holds, from either engine's document: its resources, its outputs (never a sensitive value) and the engine version that wrote it. */
export interface StateContents {
  format: StateFormat;
  resources: StateResource[];
  outputs: { name: string; sensitive: boolean; value: unknown }[];
  engineVersion: string | null;
}

/** Pulumi marks a secret value as an object with this key and value (its "secret signature"). */
const PULUMI_SECRET_SIG = "4dabf18193072939515e22adb298388d";
const holdsPulumiSecret = (v: unknown): boolean =>
  !!v && typeof v === "object" && (Array.isArray(v) ? v.some(holdsPulumiSecret) : PULUMI_SECRET_SIG in v || Object.values(v).some(holdsPulumiSecret));

interface PulumiResource {
  urn?: string;
  type?: string;
  custom?: boolean;
  delete?: boolean;
  id?: string;
  outputs?: Record<string, unknown>;
}

export function stateContents(doc: unknown): StateContents {
  if (isPulumiCheckpoint(doc)) {
    const latest = doc.checkpoint.latest ?? {};
    const all = (Array.isArray(latest.resources) ? latest.resources : []) as PulumiResource[];
    // A Pulumi output holding a secret anywhere in it is sensitive as a whole (its ciphertext is never shown either).
    const sensitivePaths = (outputs: Record<string, unknown>) => Object.entries(outputs).filter(([, v]) => holdsPulumiSecret(v)).map(([k]) => [{ type: "get_attr", value: k }]);
    const stackOutputs = all.find((r) => r.type === "pulumi:pulumi:Stack")?.outputs ?? {};
    const version = (latest.manifest as { version?: unknown } | undefined)?.version;
    return {
      format: "pulumi",
      // Custom resources (not component resources, providers, or ones pending deletion), by URN.
      resources: all
        .filter((r) => r.custom && !r.delete && typeof r.urn === "string" && !r.type?.startsWith("pulumi:providers:"))
        .map((r) => ({
          address: r.urn!,
          managed: true,
          type: r.type ?? "",
          provider: (r.type ?? "").split(":")[0],
          instances: [{ attributes: { ...(r.id !== undefined ? { id: r.id } : {}), ...(r.outputs ?? {}) }, sensitive_attributes: sensitivePaths({ id: r.id, ...(r.outputs ?? {}) }) }],
        })),
      outputs: Object.entries(stackOutputs).map(([name, v]) => (holdsPulumiSecret(v) ? { name, sensitive: true, value: null } : { name, sensitive: false, value: v })),
      engineVersion: typeof version === "string" ? `pulumi ${version}` : null,
    };
  }
  const v4 = (doc ?? {}) as StateV4Doc;
  return {
    format: "opentofu",
    resources: ((v4.resources ?? []) as (NonNullable<StateV4Doc["resources"]>[number] & { module?: string })[]).map((r) => ({
      address: `${r.module ? `${r.module}.` : ""}${r.mode === "data" ? "data." : ""}${r.type}.${r.name}`,
      managed: r.mode === "managed",
      type: r.type,
      provider: r.provider,
      instances: r.instances ?? [],
    })),
    outputs: Object.entries(v4.outputs ?? {}).map(([name, o]) => ({ name, sensitive: !!o.sensitive, value: o.sensitive ? null : o.value })),
    engineVersion: v4.terraform_version ?? null,
  };
}

/**
 * The addresses of the resources the component's state holds, read from the backend that keeps it (any kind, not only
 * Planton-managed): what keeps running when Planton lets go of it. `unreadable` says why they could not be listed (a
 * backend that cannot be reached), in which case none are.
 */
export async function stateResourceAddresses(db: Queryable, orgId: string, componentId: string): Promise<{ addresses: string[]; backend: string | null; unreadable: string | null }> {
  const state = await getComponentState(db, orgId, componentId);
  return { addresses: state?.resources.map((r) => r.address) ?? [], backend: state?.backend.name ?? null, unreadable: state?.unreadable ?? null };
}

/**
 * The component's state summary, from the backend that keeps it now (any kind: after a move off Planton-managed
 * storage, the destination, not the copy kept there for the move's rollback); sensitive values are never included.
 * `planton` says whether it is Planton-managed (its versions, rollback and per-write time exist only there);
 * `unreadable` why a backend of another kind could not be read (nothing else is answered then).
 */
export async function getComponentState(db: Queryable, orgId: string, componentId: string) {
  const [component] = await db
    .select({ id: infraComponents.id })
    .from(infraComponents)
    .where(and(eq(infraComponents.orgId, orgId), eq(infraComponents.id, componentId)));
  if (!component) throw notFound(`Infra Component ${componentId}`, "Check the id, or find it in the Infra Components list.");
  const [served] = await servedComponents(db, orgId, { componentId });
  const [current] = served?.backendId ? await db.select().from(stateBackends).where(and(eq(stateBackends.id, served.backendId), eq(stateBackends.orgId, orgId))) : [];
  if (current && current.kind !== PLANTON_MANAGED_KIND) return remoteState(db, current, served!.key);
  const [row] = await db
    .select({ s: stateObjects, backendName: stateBackends.name, backendKind: stateBackends.kind })
    .from(stateObjects)
    .leftJoin(stateBackends, eq(stateBackends.id, stateObjects.backendId))
    .where(eq(stateObjects.componentId, componentId));
  if (!row) return null;
  const contents = stateContents(row.s.state);
  return {
    ...summary(contents),
    planton: true,
    unreadable: null,
    backend: { id: row.s.backendId, name: row.backendName, kind: row.backendKind },
    key: row.s.key,
    lineage: row.s.lineage,
    serial: row.s.serial,
    checksum: row.s.checksum,
    updatedAt: row.s.updatedAt,
    lock: row.s.lockInfo,
    lockedByJob: row.s.lockedByJob,
  };
}

/** What the State tab lists of a state's contents: managed resources (first instance's id unless sensitive) and outputs. */
function summary(contents: StateContents) {
  return {
    format: contents.format,
    engineVersion: contents.engineVersion,
    resources: contents.resources
      .filter((r) => r.managed)
      .map((r) => ({ address: r.address, type: r.type, provider: r.provider, instances: r.instances.length, id: shownId(r.instances[0]) })),
    outputs: contents.outputs,
  };
}

/** A state on a backend of another kind, read through its store (with the connection's credentials, on the server). */
async function remoteState(db: Queryable, backend: typeof stateBackends.$inferSelect, key: string) {
  const where = { backend: { id: backend.id, name: backend.name, kind: backend.kind }, key, planton: false, updatedAt: null, lockedByJob: null };
  try {
    const store = await openStore(db, backend);
    try {
      const [state, lock] = await Promise.all([store.read(key), store.lockHolder(key)]);
      if (!state) return null;
      const contents = stateContents(JSON.parse(Buffer.from(state.bytes).toString("utf8")));
      return { ...where, ...summary(contents), unreadable: null, lineage: state.lineage, serial: state.serial, checksum: state.checksum, lock };
    } finally {
      await store.close?.();
    }
  } catch (err) {
    return { ...where, format: null, engineVersion: null, resources: [], outputs: [], unreadable: `${backend.name} could not be read (${accessErrorSentence(err)})`, lineage: null, serial: null, checksum: null, lock: null };
  }
}
