// A job's progress events in the browser: one store per job (kept across remounts), fed by the
// SSE subscription, resumed from the last seq seen, each event kept once and in order.
"use client";
import { useEffect, useRef, useState } from "react";
import type { JobResult, JobStatus, ProgressEvent } from "@/lib/runner-protocol";
import { useTRPCClient } from "@/lib/trpc/client";

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

/**
 * Subscribes to a job's events. `onStatus` runs when status events arrive (the page applies the
 * store's events to the job it holds); `refetch` runs, debounced, only when an event needs a fresh
 * read of the job (needsJobRead) and when the stream ends. Returns the store and a version that bumps
 * at most once a frame.
 */
export function useJobEvents(org: string, jobId: string, handlers: { onStatus: () => void; refetch: () => void }) {
  const client = useTRPCClient();
  const store = jobEventStore(jobId);
  const [version, setVersion] = useState(0);
  const [state, setState] = useState<StreamState>("connecting");
  const handlersRef = useRef(handlers);
  handlersRef.current = handlers;

  useEffect(() => {
    let frame = 0;
    let readTimer: ReturnType<typeof setTimeout> | undefined;
    const bump = () => {
      if (!frame) frame = requestAnimationFrame(() => ((frame = 0), setVersion((v) => v + 1)));
    };
    const readJob = () => {
      clearTimeout(readTimer);
      readTimer = setTimeout(() => handlersRef.current.refetch(), 150);
    };
    const sub = client.jobs.stream.subscribe(
      { org, id: jobId, lastEventId: store.lastSeq ? String(store.lastSeq) : null },
      {
        onStarted: () => setState("live"),
        onData: (tracked) => {
          const fresh = store.add([tracked.data as ProgressEvent]);
          if (!fresh.length) return;
          bump();
          if (fresh.some(isStatusEvent)) handlersRef.current.onStatus();
          if (fresh.some(needsJobRead)) readJob();
        },
        onConnectionStateChange: (s) => {
          if (s.state === "connecting" && s.error) setState("reconnecting");
          else if (s.state === "pending") setState("live");
        },
        onError: () => setState("reconnecting"),
        onComplete: () => {
          setState("ended");
          readJob();
        },
      },
    );
    return () => {
      sub.unsubscribe();
      cancelAnimationFrame(frame);
      clearTimeout(readTimer);
    };
  }, [client, org, jobId, store]);

  return { store, version, state };
}
