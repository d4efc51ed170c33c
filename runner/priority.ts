// A runner's CPU priority. Engine work is CPU-bound for long stretches (the builtin engine's walk, an
// engine CLI's plan); where a runner shares a machine with the console — the console's hosted runners
// always do — a lower priority keeps the console's pages, API and live streams ahead of that work, which
// still gets every cycle nothing else wants.
import fs from "node:fs";
import os from "node:os";

/** The lowest priority a process can ask for (the highest nice value). */
export const MOST_NICE = 19;

/**
 * Lowers this process's priority to nice `nice` — never raises it (that takes privileges): every thread it
 * has now (Linux keeps a nice value per thread), so the threads and engine processes it starts later
 * inherit it. Returns the nice value the process runs at.
 */
export function lowerPriority(nice: number): number {
  const threads = process.platform === "linux" ? fs.readdirSync("/proc/self/task").map(Number) : [0];
  for (const tid of threads) {
    try {
      if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
    } catch (err) {
      // A thread that ended since the listing: nothing to lower.
      if ((err as { info?: { code?: string } }).info?.code !== "ESRCH") throw err;
    }
  }
  return os.getPriority(0);
}
