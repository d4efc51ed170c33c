// The server's side of lib/component-lifecycle.ts: a component's facts, read under a row lock, and the
// refusal of an action its status does not allow, in the words the console's disabled button shows.
import { eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { infraComponents } from "@/db/schema";
import { COMPONENT_STATUSES, componentActionRefusal, type ComponentAction, type ComponentFacts, type ComponentStatus } from "@/lib/component-lifecycle";
import type { Role } from "@/lib/roles";
import { conflict, forbidden } from "../../errors";

/** What did not happen, per action: a job refused says nothing ran, as preflight's refusals do. */
const NOTHING: Record<ComponentAction, string> = { update: "Nothing was changed", deploy: "Nothing ran", delete: "Nothing was changed", forget: "Nothing was changed" };

export const factsOf = (c: { status: ComponentStatus; name: string; deleteJobId: string | null }, role: Role): ComponentFacts => ({
  status: c.status,
  name: c.name,
  deleteJobId: c.deleteJobId,
  isAdmin: role === "admin",
});

/** Throws the refusal of `action` for the component as it is, or returns when the action may be done. */
export function assertComponentAction(action: ComponentAction, c: { status: ComponentStatus; name: string; deleteJobId: string | null }, role: Role): void {
  const facts = factsOf(c, role);
  const why = componentActionRefusal(action, facts);
  if (!why) return;
  // The one refusal that is about the caller, not the component.
  if (action === "forget" && !facts.isAdmin && !componentActionRefusal(action, { ...facts, isAdmin: true })) throw forbidden(`${NOTHING[action]}: ${why}.`);
  throw conflict(`${NOTHING[action]}: ${why}.`);
}

/** The component's row, locked until the transaction ends: a delete, a change and a job for it take turns. */
export async function lockComponent(tx: Queryable, id: string) {
  const [row] = await tx
    .select({ id: infraComponents.id, name: infraComponents.name, status: infraComponents.status, deleteJobId: infraComponents.deleteJobId, specVersion: infraComponents.specVersion })
    .from(infraComponents)
    .where(eq(infraComponents.id, id))
    .for("update");
  return row;
}

/** The statuses in which `action` is refused whoever asks: what a conditional write excludes. */
export const statusesRefusing = (action: ComponentAction): ComponentStatus[] =>
  COMPONENT_STATUSES.filter((status) => componentActionRefusal(action, { status, name: "", deleteJobId: null, isAdmin: true }) !== null);
