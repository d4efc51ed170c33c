// The runner API's routes as the files under app/api/runner/v1 declare them, for the suites that must
// cover every one (the bad-input sweep, the job-credential matrix): a new route file is in them at once.
import fs from "node:fs";
import path from "node:path";

const dir = path.resolve(import.meta.dirname, "../app/api/runner/v1");

/** Each exported method of each route file: `route` as `/jobs/[jobId]/state/lock`. */
export function runnerRoutes(): { method: string; route: string }[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => path.basename(f) === "route.ts")
    .flatMap((f) =>
      [...fs.readFileSync(path.join(dir, f), "utf8").matchAll(/export const (GET|POST|PUT|PATCH|DELETE)\b/g)].map((m) => ({ method: m[1], route: `/${path.dirname(f).split(path.sep).join("/")}` })),
    );
}
