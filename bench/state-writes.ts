// bench/jobs.ts's rows on how an update job saved its state (issue 15): apply's time against its
// preview's, whole-state writes (state versions the job made), and the journal requests the runner
// sent (read back from the log line each compaction leaves).
import { and, eq, inArray } from "drizzle-orm";
import type { DatabaseHandle } from "../db/client";
import { progressEvents, stateVersions } from "../db/schema";
import { JOURNAL_LINE } from "../lib/state-delta";

interface StepTimes {
  id: string;
  steps: { step: string; startedAt?: string | Date | null; endedAt?: string | Date | null }[];
}

const took = (j: StepTimes, step: string) => {
  const s = j.steps.find((x) => x.step === step);
  return s?.startedAt && s.endedAt ? +new Date(s.endedAt) - +new Date(s.startedAt) : null;
};

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};

export async function stateWriteRows(handle: DatabaseHandle, jobs: StepTimes[]): Promise<[string, string, string][]> {
  const ids = jobs.map((j) => j.id);
  const ratios = jobs.map((j) => [took(j, "apply"), took(j, "preview")]).filter(([a, p]) => a !== null && p) .map(([a, p]) => a! / p!);
  const versions = await handle.db.select({ jobId: stateVersions.jobId }).from(stateVersions).where(inArray(stateVersions.jobId, ids));
  const lines = await handle.db
    .select({ jobId: progressEvents.jobId, payload: progressEvents.payload })
    .from(progressEvents)
    .where(and(inArray(progressEvents.jobId, ids), eq(progressEvents.type, "log")));
  const perJob = new Map<string, { changes: number; requests: number }>();
  for (const l of lines) {
    const m = JOURNAL_LINE.exec(String((l.payload as { line?: unknown }).line ?? ""));
    if (m) perJob.set(l.jobId, { changes: Number(m[1]), requests: Number(m[2]) });
  }
  const full = ids.map((id) => versions.filter((v) => v.jobId === id).length);
  const journal = ids.map((id) => perJob.get(id) ?? { changes: 0, requests: 0 });
  return [
    [`  apply / preview time p50`, `× ${median(ratios).toFixed(2)}`, `${ratios.length} jobs (the target is ≤ × 2)`],
    [
      `  state writes per job p50: whole states / journal requests`,
      `${median(full)} / ${median(journal.map((x) => x.requests))}`,
      `${median(journal.map((x) => x.changes))} resource changes per job sent in those requests, compacted into one write at the apply's end`,
    ],
  ];
}
