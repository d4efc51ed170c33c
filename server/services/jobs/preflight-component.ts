// Preflight for one component without creating a job: what the Run job dialog shows before submit.
import { z } from "zod";
import type { Queryable } from "@/db/client";
import type { Actor } from "../../actor";
import { getComponent } from "../components/queries";
import { preflightForComponent, type PreflightReport } from "./preflight";

export const preflightComponentInput = z.object({ componentId: z.string().min(1) });

export async function preflightComponent(db: Queryable, actor: Actor, raw: z.input<typeof preflightComponentInput>): Promise<PreflightReport> {
  const { componentId } = preflightComponentInput.parse(raw);
  const component = await getComponent(db, actor.orgId, componentId);
  return (await preflightForComponent(db, { ...component, orgId: actor.orgId })).report;
}
