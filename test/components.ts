// Components for suites that run their jobs themselves: saved through the real services without
// deploying (a create is a draft until its first job; a change records its version, no job).
import type { z } from "zod";
import type { Database } from "../db/client";
import type { createComponentBody, updateComponentBody } from "../lib/api/component-schemas";
import type { Actor } from "../server/actor";
import { changeComponent, createComponentAndDeploy } from "../server/services/components/lifecycle";

export async function draftComponent(db: Database, actor: Actor, input: Omit<z.input<typeof createComponentBody>, "deploy">) {
  return (await createComponentAndDeploy(db, actor, { ...input, deploy: false })).component;
}

export async function reconfigure(db: Database, actor: Actor, input: Omit<z.input<typeof updateComponentBody>, "deploy">) {
  return (await changeComponent(db, actor, { ...input, deploy: false })).component;
}
