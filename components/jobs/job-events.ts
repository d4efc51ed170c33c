// A job's progress events in the browser: one store per job (kept across remounts), fed by the
// SSE subscription, resumed from the last seq seen, each event kept once and in order.
"use client";
import { useEffect, useRef, useState } from "react";
import type { ProgressEvent } from "@/lib/runner-protocol";
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

/**
 * Subscribes to a job's events. `onStatus` runs (debounced) when a job_status or operation_status
 * arrives, so the page refetches the job. Returns the store and a version that bumps at most once a frame.
 */
export function useJobEvents(org: string, jobId: string, onStatus: () => void) {
  const client = useTRPCClient();
  const store = jobEventStore(jobId);
  const [version, setVersion] = useState(0);
  const [state, setState] = useState<StreamState>("connecting");
  const onStatusRef = useRef(onStatus);
  onStatusRef.current = onStatus;

  useEffect(() => {
    let frame = 0;
    let statusTimer: ReturnType<typeof setTimeout> | undefined;
    const bump = () => {
      if (!frame) frame = requestAnimationFrame(() => ((frame = 0), setVersion((v) => v + 1)));
    };
    const statusChanged = () => {
      clearTimeout(statusTimer);
      statusTimer = setTimeout(() => onStatusRef.current(), 150);
    };
    const sub = client.jobs.stream.subscribe(
      { org, id: jobId, lastEventId: store.lastSeq ? String(store.lastSeq) : null },
      {
        onStarted: () => setState("live"),
        onData: (tracked) => {
          const fresh = store.add([tracked.data as ProgressEvent]);
          if (!fresh.length) return;
          bump();
          if (fresh.some((e) => e.type === "job_status" || e.type === "operation_status" || e.type === "outputs")) statusChanged();
        },
        onConnectionStateChange: (s) => {
          if (s.state === "connecting" && s.error) setState("reconnecting");
          else if (s.state === "pending") setState("live");
        },
        onError: () => setState("reconnecting"),
        onComplete: () => {
          setState("ended");
          statusChanged();
        },
      },
    );
    return () => {
      sub.unsubscribe();
      cancelAnimationFrame(frame);
      clearTimeout(statusTimer);
    };
  }, [client, org, jobId, store]);

  return { store, version, state };
}
