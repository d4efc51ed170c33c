import { serverConfig, type ServerConfig } from "./config";
import { getRuntime } from "./runtime";
import path from "node:path";
import { startAuditArchiver } from "./services/audit/archive";
import { startScheduler } from "./services/jobs/scheduler";
import { startHostedRunners } from "./services/runners/hosted";
import { startTracing } from "@/lib/telemetry";
import { metrics } from "./metrics";
import { serverKeyMismatch } from "./server-key-check";
import { resealSentence, resealUnderServerKey } from "./key-rotation";
import { directLane, type DirectLane } from "./direct-lane";

/** Everything the server process runs besides answering requests. */
export async function startServerProcesses(): Promise<void> {
  const config = configOrExit();
  const runtime = await getRuntime();
  const g = globalThis as unknown as { __plantonProcesses?: boolean };
  if (g.__plantonProcesses) return;
  g.__plantonProcesses = true;
  // On PGlite the key and the database share the data folder; on Postgres, replicas each bring their own.
  const keyProblem = runtime.handle.driver === "postgres" ? await serverKeyMismatch(runtime.db) : null;
  if (keyProblem) {
    console.error(keyProblem);
    process.exit(1);
  }
  // A key rotation in progress (PLANTON_SECRET_KEY_PREVIOUS): what the old keys sealed is re-sealed under the new one,
  // in the background — meanwhile it still opens with the old keys.
  resealUnderServerKey(runtime.db)
    .then((report) => report && console.log(resealSentence(report)))
    .catch((err) => console.error(`[key-rotation] re-sealing under the server key stopped: ${(err as Error).message}; the next start carries on.`));
  // scripts/serve.mjs answers the runner API and the live event streams through this, not through Next.js's
  // request handling. Not under `npm run dev`, where Next.js's routes (the same handlers) pick up edits.
  if (process.env.NODE_ENV === "production") (globalThis as unknown as { __plantonDirectLane?: DirectLane }).__plantonDirectLane = directLane;
  // Registered before the first request is timed; tracing starts only when OTEL_EXPORTER_OTLP_ENDPOINT is set.
  metrics();
  if (await startTracing("planton-console")) console.log(`[tracing] jobs are traced over OTLP to ${config.OTEL_EXPORTER_OTLP_ENDPOINT}`);
  // Its first tick, now, also resumes every state move whose process died mid-way (see resumeRunningMoves), as every tick after does.
  startScheduler(runtime.handle);
  // Unlimited retention unless the operator sets one; the archive's own advisory lock keeps it to one replica.
  const retentionDays = config.PLANTON_AUDIT_RETENTION_DAYS;
  startAuditArchiver(runtime.db, retentionDays ? { retentionDays, dir: config.PLANTON_AUDIT_ARCHIVE_DIR ?? path.join(config.PLANTON_DATA_DIR, "audit-archive") } : null);
  const serverUrl = config.PLANTON_SERVER_URL ?? `http://127.0.0.1:${config.PORT}`;
  startHostedRunners(runtime.db, { serverUrl }).catch((err) => console.error(`[hosted-runners] not started: ${(err as Error).message}`));
}

/** A bad setting stops the server at start, naming the variable, rather than at its first use. */
function configOrExit(): ServerConfig {
  try {
    return serverConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
