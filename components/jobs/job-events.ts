// A job's progress events in the browser: one store per job (kept across remounts), fed by the
// live event stream, resumed from the last seq seen, each event kept once and in order.
"use client";
import { useEffect, useRef, useState } from "react";
import type { JobResult, JobStatus, ProgressEvent } from "@/lib/runner-protocol";
import { decodeEventMessage, JOB_STREAM_END_EVENT, jobEventStreamPath } from "@/lib/job-event-stream";

type Listener = (added: ProgressEvent[]) => void;

export class JobEventStore {
  readonly events: ProgressEvent[] = [];
  lastSeq = 0;
  private listeners = new Set<Listener>();

  /** Keeps events past the last seq only: a replay after a reconnect adds nothing twice. */
  add(batch: ProgressEvent[]): ProgressEvent[] {
    const fresh: ProgressEvent[] = [];
    for (const e of batch) {
      if (e.seq <= this.lastSeq) continue;
      this.lastSeq = e.seq;
      this.events.push(e);
      fresh.push(e);
    }
    if (fresh.length) this.listeners.forEach((l) => l(fresh));
    return fresh;
  }

  subscribe(l: Listener): () => void {
    this.listeners.add(l);
    return () => void this.listeners.delete(l);
  }

  /** The events after `seq`, in order. */
  after(seq: number): ProgressEvent[] {
    let i = this.events.length;
    while (i > 0 && this.events[i - 1].seq > seq) i--;
    return this.events.slice(i);
  }

  ofStep(step: string, type?: ProgressEvent["type"]): ProgressEvent[] {
    return this.events.filter((e) => e.operation === step && (!type || e.type === type));
  }
}

const stores = new Map<string, JobEventStore>();
export function jobEventStore(jobId: string): JobEventStore {
  let s = stores.get(jobId);
  if (!s) stores.set(jobId, (s = new JobEventStore()));
  return s;
}

export type StreamState = "connecting" | "live" | "reconnecting" | "ended";

/** The parts of a job (as jobs.get answers) that status events change. */
export interface JobStatusFields {
  status: JobStatus;
  result: JobResult;
  reason: string | null;
  eventSeq: number;
  startedAt: Date | null;
  pausedAt: Date | null;
  completedAt: Date | null;
  steps: { step: string; status: JobStatus; result: JobResult; reason: string | null; startedAt: Date | null; endedAt: Date | null }[];
}

const isStatusEvent = (e: ProgressEvent) => e.type === "job_status" || e.type === "operation_status";

/**
 * The job with its status events applied: the job's and its steps' status, result, reason and
 * times, from events newer than what the job was read at (its eventSeq), so a replay after a
 * reload changes nothing the fresh read already has.
 */
export function applyStatusEvents<J extends JobStatusFields>(job: J, events: ProgressEvent[]): J {
  let next = job;
  for (const e of events) {
    if (e.seq <= next.eventSeq) continue;
    next = { ...next, eventSeq: e.seq };
    if (!isStatusEvent(e)) continue;
    const p = e.payload as { status: JobStatus; result: JobResult; reason?: string };
    const at = new Date(e.ts);
    if (e.type === "job_status") {
      next = {
        ...next,
        status: p.status,
        result: p.result,
        ...(p.reason !== undefined ? { reason: p.reason } : {}),
        ...(p.status === "running" && !next.startedAt ? { startedAt: at } : {}),
        ...(p.status === "awaiting_approval" ? { pausedAt: at } : {}),
        ...(p.status === "completed" ? { completedAt: at } : {}),
      };
    } else {
      next = {
        ...next,
        steps: next.steps.map((s) =>
          s.step !== e.operation
            ? s
            : {
                ...s,
                status: p.status,
                result: p.result,
                ...(p.reason !== undefined ? { reason: p.reason } : {}),
                ...(p.status === "running" ? { startedAt: at } : {}),
                ...(p.status === "completed" && s.startedAt ? { endedAt: at } : {}),
              },
        ),
      };
    }
  }
  return next;
}

/**
 * Whether the event means the job's record holds something the event does not, so the page reads
 * the job again: a job_status (what you may do now, runner attempts, approvals), the preview's end
 * (its plan), outputs.
 */
export function needsJobRead(e: ProgressEvent): boolean {
  if (e.type === "job_status" || e.type === "outputs") return true;
  return e.type === "operation_status" && e.operation === "preview" && (e.payload as { status?: string }).status === "completed";
}

/** Pause before opening the stream again after the server refused or dropped it. */
const RETRY_MS = 2_000;

/**
 * Subscribes to a job's events (GET /api/v1/jobs/{id}/events/stream with the session cookie, the
 * wire format of lib/job-event-stream.ts). `onStatus` runs when status events arrive (the page
 * applies the store's events to the job it holds); `refetch` runs, debounced, only when an event
 * needs a fresh read of the job (needsJobRead) and when the stream ends. The browser's EventSource
 * resumes with Last-Event-ID after a dropped connection; a refused one is opened again after the
 * last seq the store holds. Returns the store and a version that bumps at most once a frame.
 */
export function useJobEvents(org: string, jobId: string, handlers: { onStatus: () => void; refetch: () => void }) {
  const store = jobEventStore(jobId);
  const [version, setVersion] = useState(0);
  const [state, setState] = useState<StreamState>("connecting");
  const handlersRef = useRef(handlers);
  handlersRef.current = handlers;

  useEffect(() => {
    let frame = 0;
    let readTimer: ReturnType<typeof setTimeout> | undefined;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let source: EventSource | undefined;
    let closed = false;
    const bump = () => {
      if (!frame) frame = requestAnimationFrame(() => ((frame = 0), setVersion((v) => v + 1)));
    };
    const readJob = () => {
      clearTimeout(readTimer);
      readTimer = setTimeout(() => handlersRef.current.refetch(), 150);
    };
    const open = () => {
      const es = (source = new EventSource(`/api/v1${jobEventStreamPath(jobId, { org, after: store.lastSeq })}`));
      es.onopen = () => setState("live");
      es.onmessage = (m) => {
        const fresh = store.add([decodeEventMessage(m.data)]);
        if (!fresh.length) return;
        bump();
        if (fresh.some(isStatusEvent)) handlersRef.current.onStatus();
        if (fresh.some(needsJobRead)) readJob();
      };
      es.addEventListener(JOB_STREAM_END_EVENT, () => {
        es.close();
        setState("ended");
        readJob();
      });
      es.onerror = () => {
        if (closed) return;
        setState("reconnecting");
        // CONNECTING: the browser reconnects by itself with Last-Event-ID. CLOSED: it gave up (a refusal); open anew later.
        if (es.readyState === EventSource.CLOSED) retryTimer = setTimeout(open, RETRY_MS);
      };
    };
    open();
    return () => {
      closed = true;
      source?.close();
      cancelAnimationFrame(frame);
      clearTimeout(readTimer);
      clearTimeout(retryTimer);
    };
  }, [org, jobId, store]);

  return { store, version, state };
}
