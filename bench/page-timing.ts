// Timing a page's service call for the list benchmarks (bench/lists.ts, bench/audit.ts): wall-clock median
// and p95 after a warm-up, and the CPU each call cost in this process and in the Postgres backends that
// served it. On a machine other work keeps busy, wall-clock mostly measures waiting for a core; the CPU
// per call is what the page itself costs, and holds from one run to the next.
import fs from "node:fs";
import os from "node:os";
import { sql } from "drizzle-orm";
import { rowsOf, type Database } from "../db/client";

export interface PageFigure {
  median: number;
  p95: number;
  /** CPU milliseconds per call in this process (driver, drizzle, the service's own work). */
  cpuNode: number;
  /** CPU milliseconds per call in the database's backends (planning, execution); null where they cannot be read. */
  cpuPostgres: number | null;
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const TICK_MS = 1000 / 100; // USER_HZ on Linux

/** CPU milliseconds the database's client backends have used so far, read from /proc (Postgres on this machine). */
async function backendsCpu(db: Database): Promise<number | null> {
  const pids = rowsOf<{ pid: number }>(await db.execute(sql`select pid from pg_stat_activity where datname = current_database() and backend_type = 'client backend'`));
  let ticks = 0;
  for (const { pid } of pids) {
    try {
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  }
  return ticks * TICK_MS;
}

export async function timePage(db: Database, runs: number, fn: () => Promise<unknown>): Promise<PageFigure> {
  await fn(); // warm the plan and the cache once
  const xs: number[] = [];
  const pg0 = await backendsCpu(db);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    xs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const cpu = process.cpuUsage(cpu0);
  const pg1 = await backendsCpu(db);
  return {
    median: quantile(xs, 0.5),
    p95: quantile(xs, 0.95),
    cpuNode: (cpu.user + cpu.system) / 1000 / runs,
    cpuPostgres: pg0 !== null && pg1 !== null ? Math.max(0, pg1 - pg0) / runs : null,
  };
}

/** The table of figures, against the target. */
export function printPages(title: string, figures: [string, PageFigure][], target: number) {
  console.log(`\n${title}`);
  console.log(`  ${"".padEnd(46)} ${"median".padStart(9)} ${"p95".padStart(9)}   CPU per call: this process + Postgres`);
  for (const [name, f] of figures) {
    const cpu = `${f.cpuNode.toFixed(1)} + ${f.cpuPostgres === null ? "?" : f.cpuPostgres.toFixed(1)} ms`;
    console.log(`  ${name.padEnd(46)} ${f.median.toFixed(1).padStart(6)} ms ${f.p95.toFixed(1).padStart(6)} ms   ${cpu.padEnd(18)} ${f.p95 <= target ? "ok" : "MISSES the target"}`);
  }
}

/** The machine and how busy it is, for the figures' heading. */
export const machine = () => `${os.cpus().length} cores (${os.cpus()[0]?.model}), load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`;
