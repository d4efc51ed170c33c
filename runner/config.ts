// Every environment variable the runner process reads, checked in one place (README's configuration table lists them).
import { absoluteFolder, absoluteFolders, envVar, readEnv, secretEnvVar, text, urlOf, wholeNumber, type EnvValues } from "../lib/env";
import { TRACING_ENV } from "../lib/telemetry";
import { MOST_NICE } from "./priority";

export const RUNNER_ENV = {
  PLANTON_URL: envVar(urlOf("http:", "https:"), "https://planton.example.com", "the console the runner claims jobs from (or --url)"),
  PLANTON_RUNNER_TOKEN: secretEnvVar(text(), "rnr_…", "the runner's token rnr_… (or --token); an admin creates one in Settings → Runners"),
  PLANTON_RUNNER_NAME: envVar(text(), "build-host-1", "the name the runner shows in its logs (or --name; default: the host name)"),
  PLANTON_RUNNER_HEARTBEAT_MS: envVar(wholeNumber(100, 600_000, 5_000), "5000", "how often, in milliseconds, a runner renews its hold on a running job"),
  PLANTON_RUNNER_NICE: envVar(
    wholeNumber(0, MOST_NICE, 0),
    "10",
    "the CPU priority the runner and its engines run at, as a nice value from 0 to 19 (or --nice): higher yields the CPU to other work on the machine; the console's hosted runners get PLANTON_HOSTED_RUNNER_NICE",
  ),
  PLANTON_RUNNER_PARENT_PID: envVar(wholeNumber(1, 2 ** 31), "12345", "set by the console for its hosted runners: the runner stops when that process is gone"),
  PLANTON_RUNNER_LOCAL_BASE: envVar(
    absoluteFolder(),
    "/var/lib/planton/local-infra",
    "set by the console for its hosted runners: `local` connection roots are confined under <base>/<organization>, and files there are private to the runner's user",
  ),
  PLANTON_RUNNER_LOCAL_ROOTS: envVar(absoluteFolders(), "/srv/sites:/srv/exports", "with PLANTON_RUNNER_LOCAL_BASE: other folders a `local` connection's root may be in"),
  ...TRACING_ENV,
};

export type RunnerConfig = EnvValues<typeof RUNNER_ENV>;

/** The runner's configuration from the environment; throws a ConfigError naming each bad value. */
export const runnerConfig = (env: Record<string, string | undefined> = process.env): RunnerConfig => readEnv("The Planton runner", RUNNER_ENV, env);
