// The runner API (/api/runner/v1), every route in one table and one dispatcher. The console's own HTTP
// server (scripts/serve.mjs) hands these requests straight to it (server/direct-lane.ts), and Next.js's
// catch-all route (app/api/runner/v1/[...path]) to the same dispatcher when a request reaches it: a
// runner's event upload or state-journal batch then skips the page router, which cost several times
// what the upload's own work does (lib/runner-protocol.ts has the protocol's shapes).
import { z } from "zod";
import { attemptEndRequest, claimRequest, eventsUploadRequest, outputsRequest, RUNNER_API, STEP_NAMES, stepFinishRequest, stepStartRequest, type WhoamiResponse } from "@/lib/runner-protocol";
import { lockRequest } from "@/lib/state-lock";
import { stateJournalBatch, stateJournalCommit } from "@/lib/state-delta";
import { noSuchRouteResponse, refusalResponse } from "../error-map";
import { downloadArtifact, uploadArtifact } from "../services/runners/artifacts";
import { endAttempt } from "../services/runners/attempt-end";
import { claimJobWaiting } from "../services/runners/claim";
import { readJobConnection } from "../services/runners/connection";
import { heartbeat } from "../services/runners/heartbeat";
import { readJobSecret, saveOutputs } from "../services/runners/outputs";
import { getState, lockState, putState, unlockState } from "../services/runners/state";
import { finishStep, startStep } from "../services/runners/steps";
import { uploadEvents } from "../services/runners/upload-events";
import { appendStateJournal, commitStateJournal } from "../services/state/state-journal";
import { json, jobRoute, runnerRoute, type RunnerApiHandler } from "./http";

type Method = "GET" | "POST" | "PUT" | "DELETE";

/** Path patterns under RUNNER_API; `[name]` is a parameter (one path segment). */
const ROUTES: Record<string, Partial<Record<Method, RunnerApiHandler>>> = {
  /** Which runner a token belongs to: a runner checks its token here before it says it started. */
  "/whoami": {
    GET: runnerRoute(async ({ runner }) => json({ runner: { id: runner.id, name: runner.name, kind: runner.kind, orgId: runner.orgId } } satisfies WhoamiResponse)),
  },
  /** Long-poll for one job: 200 ClaimResponse, or 204 when none came within waitSeconds. */
  "/claim": {
    POST: runnerRoute(async ({ rt, runner, req, body }) => {
      const input = await body(claimRequest);
      const claim = await claimJobWaiting(rt.handle, runner, { waitSeconds: input.waitSeconds, signal: req.signal, version: input.version, engines: input.engines });
      return claim ? json(claim) : new Response(null, { status: 204 });
    }),
  },
  "/jobs/[jobId]/heartbeat": {
    POST: jobRoute(async ({ rt, access, body }) => json(await heartbeat(rt.db, access, await body(z.object({ attemptId: z.string() }))))),
  },
  "/jobs/[jobId]/steps/[step]/start": {
    // a retried start after it finished the job cancelled answers again
    POST: jobRoute(async ({ rt, access, params, body }) => json(await startStep(rt.db, access, z.enum(STEP_NAMES).parse(params.step), await body(stepStartRequest))), { use: "closing" }),
  },
  "/jobs/[jobId]/steps/[step]/finish": {
    // a retried finish after it ended the job answers again
    POST: jobRoute(async ({ rt, access, params, body }) => json(await finishStep(rt.db, access, z.enum(STEP_NAMES).parse(params.step), await body(stepFinishRequest))), { use: "closing" }),
  },
  /** `closing`: the runner flushes its last events after the last step's finish ended the job. */
  "/jobs/[jobId]/events": {
    POST: jobRoute(async ({ rt, access, body }) => json(await uploadEvents(rt.db, access, await body(eventsUploadRequest))), { use: "closing", unconfirmed: true }),
  },
  /** Ending an attempt after its last step ended the job, or after the scheduler declared it lost, is legal. */
  "/jobs/[jobId]/attempt/end": {
    POST: jobRoute(async ({ rt, access, body }) => json(await endAttempt(rt.db, access, await body(attemptEndRequest))), { use: "ending" }),
  },
  "/jobs/[jobId]/outputs": {
    POST: jobRoute(async ({ rt, access, body }) => json(await saveOutputs(rt.db, access, await body(outputsRequest)))),
  },
  "/jobs/[jobId]/secrets/[name]": {
    GET: jobRoute(async ({ rt, access, params }) => json(await readJobSecret(rt.db, access, params.name))),
  },
  /** The job's connection as environment variables for its engine (the job credential reads only its own job's). */
  "/jobs/[jobId]/connection": {
    GET: jobRoute(async ({ rt, access }) => json(await readJobConnection(rt.db, access))),
  },
  "/jobs/[jobId]/state": {
    GET: jobRoute(async ({ rt, access }) => {
      const state = await getState(rt.db, access);
      return state ? json(state) : new Response(null, { status: 204 });
    }),
    PUT: jobRoute(async ({ rt, access, json: read }, req) => {
      const state = await read();
      return json(await putState(rt.db, access, new URL(req.url).searchParams.get("lockId"), state));
    }),
  },
  /** LockInfo → 200 {lock} | 409 {lock, message} with OpenTofu's "Error acquiring the state lock". */
  "/jobs/[jobId]/state/lock": {
    POST: jobRoute(async ({ rt, access, body }) => {
      const r = await lockState(rt.db, access, await body(lockRequest));
      return r.ok ? json({ lock: r.lock }) : json({ lock: r.lock, message: r.message }, 409);
    }),
    DELETE: jobRoute(async ({ rt, access }, req) => json(await unlockState(rt.db, access, new URL(req.url).searchParams.get("id")))),
  },
  /** A batch of resource-level state changes → {acceptedThrough}; a retried batch is kept once. */
  "/jobs/[jobId]/state/journal": {
    POST: jobRoute(async ({ rt, access, body }) => json(await appendStateJournal(rt.db, access, await body(stateJournalBatch)))),
  },
  /** Compacts the step's changes into one state write → {entries, written, match, serial, checksum}; match false: send the whole state. */
  "/jobs/[jobId]/state/journal/commit": {
    POST: jobRoute(async ({ rt, access, body }) => json(await commitStateJournal(rt.db, access, await body(stateJournalCommit)))),
  },
  /** Raw bytes with `Digest: sha-256=<base64>`; ?kind=plan|log|state|iac_input&name=… */
  "/jobs/[jobId]/artifacts": {
    POST: jobRoute(async ({ rt, access, bytes: read }, req) => {
      const url = new URL(req.url);
      const bytes = await read();
      return json(await uploadArtifact(rt.db, access, { kind: url.searchParams.get("kind"), name: url.searchParams.get("name"), digest: req.headers.get("digest"), bytes }));
    }),
  },
  "/jobs/[jobId]/artifacts/[artifactId]": {
    GET: jobRoute(async ({ rt, jobId, params }) => {
      const a = await downloadArtifact(rt.db, jobId, params.artifactId);
      return new Response(Buffer.from(a.bytes), { headers: { "content-type": "application/octet-stream", digest: a.digest, "cache-control": "no-store" } });
    }),
  },
};

const PATTERNS = Object.entries(ROUTES).map(([pattern, methods]) => ({ pattern, segments: pattern.split("/").slice(1), methods }));

/** Every route and method, as `{ method, route: "/jobs/[jobId]/state/lock" }` (for the suites that must cover each one). */
export function runnerApiRoutes(): { method: Method; route: string }[] {
  return PATTERNS.flatMap(({ pattern, methods }) => (Object.keys(methods) as Method[]).map((method) => ({ method, route: pattern })));
}

/** The route a path under RUNNER_API names, with its parameters decoded; undefined when none does. */
function match(path: string): { methods: Partial<Record<Method, RunnerApiHandler>>; params: Record<string, string> } | undefined {
  const parts = path.split("/").slice(1);
  for (const route of PATTERNS) {
    if (route.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; ok && i < parts.length; i++) {
      const seg = route.segments[i];
      if (seg.startsWith("[")) {
        if (parts[i] === "") ok = false;
        else params[seg.slice(1, -1)] = decodeURIComponent(parts[i]);
      } else ok = seg === parts[i];
    }
    if (ok) return { methods: route.methods, params };
  }
  return undefined;
}

/** Answers a runner API request: the route's handler, or a refusal that names what exists. */
export async function dispatchRunnerApi(req: Request): Promise<Response> {
  const { pathname } = new URL(req.url);
  let found: ReturnType<typeof match>;
  try {
    found = pathname.startsWith(`${RUNNER_API}/`) ? match(pathname.slice(RUNNER_API.length)) : undefined;
  } catch {
    return refusalResponse(400, "BAD_REQUEST", "Nothing was done: a path segment has a malformed %-escape or is not UTF-8. Encode each path segment with encodeURIComponent.");
  }
  const handler = found?.methods[req.method as Method];
  return handler ? handler(req, found!.params) : noSuchRouteResponse(req.method, pathname);
}
