// Settings → Modules → "Engineers may register modules", `planton module policy`: admins only.
import { eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "@/db/client";
import { organizations } from "@/db/schema";
import { modulePolicyBody, type modulePolicySchema } from "@/lib/api/module-schemas";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { modulePolicy } from "./views";

/** Sets whether engineers may register module versions; a setting that does not change records nothing. */
export async function setModulePolicy(db: Database, actor: Actor, raw: z.input<typeof modulePolicyBody>): Promise<z.infer<typeof modulePolicySchema>> {
  const input = modulePolicyBody.parse(raw);
  const before = await modulePolicy(db, actor.orgId);
  if (before.engineersMayRegister === input.engineersMayRegister) return before;
  await db.transaction(async (tx) => {
    const [org] = await tx.update(organizations).set({ engineersRegisterModules: input.engineersMayRegister, updatedAt: new Date() }).where(eq(organizations.id, actor.orgId)).returning();
    await recordAudit(tx, actor, {
      action: "module.policy_change",
      targetId: org.id,
      targetName: org.slug,
      summary: input.engineersMayRegister ? "Let engineers register module versions" : "Made registering module versions admins-only",
      changes: { engineersMayRegister: { from: before.engineersMayRegister, to: input.engineersMayRegister } },
    });
  });
  return { engineersMayRegister: input.engineersMayRegister };
}
