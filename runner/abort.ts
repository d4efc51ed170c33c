// Waiting on a runner's stop signal without leaving anything on it. The signal lives as long as the
// runner (days), and everything that waits on it — each claim, each back-off, each wait while every slot is
// busy — comes and goes: a listener left behind per wait grows without end (Node warns at the eleventh),
// and so does AbortSignal.any, which on Node 20–22 keeps every signal it derives from a long-lived one in
// that one's dependants (nodejs/node#55351; 300 000 requests left 300 000 there on Node 20.20).

/** Calls `onAbort` when `signal` aborts (at once when it has); the answer takes the listener back. */
function onAbortOf(signal: AbortSignal, onAbort: () => void): () => void {
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

/** Waits `ms`, or less when `signal` aborts; resolves either way. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    let release = () => {};
    const timer = setTimeout(() => (release(), resolve()), ms);
    if (signal) release = onAbortOf(signal, () => (clearTimeout(timer), resolve()));
  });
}

/** Waits until one of `work` settles or `signal` aborts (a rejection counts as settling). */
export async function untilFirstOrAborted(work: Promise<unknown>[], signal: AbortSignal): Promise<void> {
  let release = () => {};
  const stopped = new Promise<void>((resolve) => (release = onAbortOf(signal, resolve)));
  try {
    await Promise.race([...work.map((p) => p.then(() => {}, () => {})), stopped]);
  } finally {
    release();
  }
}

/**
 * A signal for one request: aborted with `parent`'s reason when it aborts, or with a TimeoutError after `ms`.
 * `done()` (call it when the request has ended, however) clears the timer and takes the listener off `parent`.
 */
export function boundedSignal(parent: AbortSignal | undefined, ms: number): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`The request took longer than ${ms} ms`, "TimeoutError")), ms);
  timer.unref(); // as AbortSignal.timeout's: a request's own socket keeps the process up while it lasts
  const release = parent ? onAbortOf(parent, () => controller.abort(parent.reason)) : () => {};
  return {
    signal: controller.signal,
    done: () => {
      clearTimeout(timer);
      release();
    },
  };
}
