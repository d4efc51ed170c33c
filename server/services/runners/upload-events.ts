// A runner's batch of progress events: idempotent by (attempt, runner seq), gap-free job seq.
import type { Database } from "@/db/client";
import type { UploadedEvent } from "@/lib/runner-protocol";
import { appendRunnerEvents } from "../jobs/events";
import { sameAttempt, type JobAccess } from "./job-access";

export async function uploadEvents(db: Database, access: JobAccess, body: { attemptId: string; events: UploadedEvent[] }) {
  sameAttempt(access, body.attemptId);
  const { acceptedThrough } = await appendRunnerEvents(db, access.jobId, access.attemptId, body.events);
  return { acceptedThrough };
}
