// What the State tab shows: where a component's state lives, its identity, lock and resources.
import { and, eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { infraComponents, stateBackends, stateObjects } from "@/db/schema";
import { SENSITIVE_VALUE } from "@/lib/secrets";
import { notFound } from "../../errors";
import { openStore } from "../state-backends/open-store";
import { servedComponents } from "../state-backends/served";

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

const addressOf = (r: NonNullable<StateV4Doc["resources"]>[number]) => `${r.type}.${r.name}`;

/**
 * The addresses of the resources the component's state holds, read from the backend that keeps it
 * (any kind, not only Planton-managed): what keeps running when Planton lets go of it. `unreadable`
 * says why they could not be listed (a backend that cannot be reached), in which case none are.
 */
export async function stateResourceAddresses(db: Queryable, orgId: string, componentId: string): Promise<{ addresses: string[]; backend: string | null; unreadable: string | null }> {
  const [served] = await servedComponents(db, orgId, { componentId });
  const [backend] = served?.backendId ? await db.select().from(stateBackends).where(and(eq(stateBackends.id, served.backendId), eq(stateBackends.orgId, orgId))) : [];
  if (!served || !backend) return { addresses: [], backend: null, unreadable: null };
  try {
    const store = await openStore(db, backend);
    try {
      const state = await store.read(served.key);
      if (!state) return { addresses: [], backend: backend.name, unreadable: null };
      const doc = JSON.parse(Buffer.from(state.bytes).toString("utf8")) as StateV4Doc;
      return { addresses: (doc.resources ?? []).filter((r) => r.mode === "managed").map(addressOf), backend: backend.name, unreadable: null };
    } finally {
      await store.close?.();
    }
  } catch (err) {
    return { addresses: [], backend: backend.name, unreadable: err instanceof Error ? err.message.replace(/\.$/, "") : String(err) };
  }
}

/** The component's state summary; sensitive values are never included. */
export async function getComponentState(db: Queryable, orgId: string, componentId: string) {
  const [component] = await db
    .select({ id: infraComponents.id })
    .from(infraComponents)
    .where(and(eq(infraComponents.orgId, orgId), eq(infraComponents.id, componentId)));
  if (!component) throw notFound(`Infra Component ${componentId}`, "Check the id, or find it in the Infra Components list.");
  const [row] = await db
    .select({ s: stateObjects, backendName: stateBackends.name, backendKind: stateBackends.kind })
    .from(stateObjects)
    .leftJoin(stateBackends, eq(stateBackends.id, stateObjects.backendId))
    .where(eq(stateObjects.componentId, componentId));
  if (!row) return null;
  const doc = (row.s.state ?? {}) as StateV4Doc;
  return {
    backend: { id: row.s.backendId, name: row.backendName, kind: row.backendKind },
    key: row.s.key,
    lineage: row.s.lineage,
    serial: row.s.serial,
    checksum: row.s.checksum,
    engineVersion: doc.terraform_version ?? null,
    updatedAt: row.s.updatedAt,
    lock: row.s.lockInfo,
    lockedByJob: row.s.lockedByJob,
    resources: (doc.resources ?? [])
      .filter((r) => r.mode === "managed")
      .map((r) => ({
        address: addressOf(r),
        type: r.type,
        provider: r.provider,
        instances: r.instances.length,
        id: shownId(r.instances[0]),
      })),
    outputs: Object.entries(doc.outputs ?? {}).map(([name, o]) => ({ name, sensitive: !!o.sensitive, value: o.sensitive ? null : o.value })),
  };
}
