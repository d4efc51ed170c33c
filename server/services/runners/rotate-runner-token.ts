// Rotating a runner's token: the new token is returned once; the old one, and every job credential
// issued under it, stop working at once, so the jobs the runner was running fail with the reason.
import { eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database } from "@/db/client";
import { runners } from "@/db/schema";
import type { Actor } from "../../actor";
import { recordAudit } from "../../audit";
import { newBearerToken } from "../../crypto";
import { conflict } from "../../errors";
import { endRunnerAttempts, lockOwnRunner, runnerIdInput } from "./revoke-runner";

export async function rotateRunnerToken(db: Database, actor: Actor, raw: z.input<typeof runnerIdInput>) {
  const input = runnerIdInput.parse(raw);
  const { token, hash } = newBearerToken("rnr");
  return db.transaction(async (tx) => {
    const runner = await lockOwnRunner(tx, actor, input.id);
    if (runner.revokedAt) throw conflict(`Nothing was changed: runner ${runner.name} is revoked and gets no new token. Register a new runner in Settings → Runners.`);
    const [row] = await tx.update(runners).set({ tokenHash: hash }).where(eq(runners.id, runner.id)).returning();
    const failedJobs = await endRunnerAttempts(tx, runner, `the token of runner ${runner.name} was rotated by ${actor.label}; the job's credential no longer works`);
    await recordAudit(tx, actor, {
      action: "runner.rotate_token",
      targetId: runner.id,
      targetName: runner.name,
      summary: `Rotated the token of runner ${runner.name}` + (failedJobs.length ? `; its running jobs ${failedJobs.join(", ")} failed` : ""),
      changes: { failedJobs },
    });
    return { runner: { ...row, tokenHash: undefined }, token, failedJobs };
  });
}
