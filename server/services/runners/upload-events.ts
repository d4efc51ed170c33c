// A runner's batch of progress events: idempotent by (attempt, runner seq), gap-free job seq.
import type { Database } from "@/db/client";
import type { ProgressEvent, UploadedEvent } from "@/lib/runner-protocol";
import { beginLocalAppend } from "../jobs/event-feed";
import { appendRunnerEvents } from "../jobs/events";
import { sameAttempt, type JobAccess } from "./job-access";

export async function uploadEvents(db: Database, access: JobAccess, body: { attemptId: string; events: UploadedEvent[] }) {
  sameAttempt(access, body.attemptId);
  // Viewers of this job on this process have them as soon as they are stored; other replicas read them on the NOTIFY.
  const ended = beginLocalAppend(db, access.jobId);
  let stored: ProgressEvent[] | null = null;
  try {
    // Stored only while the access checked before still holds; when it does not, the full check refuses, or passes and the batch is stored after it.
    let r = await appendRunnerEvents(db, access.jobId, access.attemptId, body.events, access.unconfirmed?.stillHolds);
    if (!r) {
      await access.unconfirmed!.confirm();
      r = await appendRunnerEvents(db, access.jobId, access.attemptId, body.events);
    }
    stored = r.stored;
    return { acceptedThrough: r.acceptedThrough };
  } finally {
    // Handed on after this answer is written (the next turn): the runner sends its next batch while this process
    // writes this one to the job's viewers here — a hundred of them took milliseconds the runner waited through.
    setImmediate(() => ended(stored));
  }
}
