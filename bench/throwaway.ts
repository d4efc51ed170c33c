// What a benchmark that runs on a database of its own shares: its clean-ups (run in reverse, also on
// Ctrl-C), its progress lines, and the database itself — a throwaway Postgres cluster, or `--url`'s.
import { openDatabase, type DatabaseHandle } from "../db/client";
import { startCluster } from "../test/postgres-cluster";

const cleanups: (() => Promise<void> | void)[] = [];

/** Runs `fn` when the benchmark ends (or is interrupted), after everything registered later. */
export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

export async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await Promise.resolve(fn()).catch(() => {});
}
for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => void cleanup().finally(() => process.exit(130)));

export const note = (m: string) => console.log(`· ${m}`);
/** Milliseconds since `t0` (process.hrtime.bigint()). */
export const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/** The database at `url`, or database `name` on a throwaway Postgres cluster started here; both closed at clean-up. */
export async function benchDatabase(name: string, url?: string): Promise<DatabaseHandle> {
  if (!url) {
    note("starting Postgres…");
    const cluster = await startCluster();
    onCleanup(() => cluster.stop());
    const { default: postgres } = await import("postgres");
    const admin = postgres(cluster.url("postgres"), { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    url = cluster.url(name);
  }
  const handle = await openDatabase({ url });
  onCleanup(() => handle.close());
  return handle;
}
