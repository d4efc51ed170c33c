// The direct path (lib/component-lifecycle.ts): create/change queue an update job, delete runs a
// destroy job, forget lets go without destroying, and a destroy job's end decides deleted or
// delete_failed. CONTRACT STUBS committed by the lead: the svc helper builds each of them.
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import type {
  componentChangeSchema,
  componentListSchema,
  componentSchema,
  componentVersionListSchema,
  createComponentBody,
  deleteComponentBody,
  forgetComponentBody,
  listComponentsInput,
  updateComponentBody,
} from "@/lib/api/component-schemas";
import type { Role } from "@/lib/roles";
import type { Actor } from "../../actor";
import type { JobRow } from "../jobs/transitions";

export type ComponentView = z.infer<typeof componentSchema>;
export type ComponentChange = z.infer<typeof componentChangeSchema>;

const notBuilt = (): never => {
  throw new Error("not built yet (issue 13 contract stub)");
};

/** Saves the component (version 1) and, unless deploy is false, queues its first update job. */
export async function createComponentAndDeploy(db: Database, actor: Actor, input: z.input<typeof createComponentBody>): Promise<ComponentChange> {
  return notBuilt();
}

/** Records the next spec version (refused when baseVersion is not the current one) and, unless deploy is false, queues an update job for it. */
export async function changeComponent(db: Database, actor: Actor, input: z.input<typeof updateComponentBody>): Promise<ComponentChange> {
  return notBuilt();
}

/** Runs a destroy job for the component (a draft that never ran is removed at once); also the retry of a failed delete. */
export async function deleteComponent(db: Database, actor: Actor, input: z.input<typeof deleteComponentBody>): Promise<ComponentChange> {
  return notBuilt();
}

/** Admins: removes the component from Planton without destroying its resources; its state is kept for export. */
export async function forgetComponent(db: Database, actor: Actor, input: z.input<typeof forgetComponentBody>): Promise<{ component: ComponentView; unmanaged: string[] }> {
  return notBuilt();
}

export async function listComponentViews(db: Queryable, actor: { orgId: string; role: Role }, input: z.input<typeof listComponentsInput>): Promise<z.infer<typeof componentListSchema>> {
  return notBuilt();
}

export async function getComponentView(db: Queryable, actor: { orgId: string; role: Role }, id: string): Promise<ComponentView> {
  return notBuilt();
}

export async function listComponentVersions(db: Queryable, orgId: string, id: string): Promise<z.infer<typeof componentVersionListSchema>> {
  return notBuilt();
}

/** Called by moveJob (jobs/transitions.ts) when a job completes: a component's destroy job decides deleted or delete_failed. */
export async function onComponentJobCompleted(tx: Queryable, job: JobRow): Promise<void> {
  return notBuilt();
}
