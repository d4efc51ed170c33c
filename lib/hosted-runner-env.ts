// The environment a Planton-hosted runner process gets: an allow-list, so none of the console's own
// secrets (PLANTON_SECRET_KEY, DATABASE_URL, BETTER_AUTH_SECRET, …) reach a runner or the modules it runs.

/** Names a hosted runner inherits from the console: what a process and the engine CLIs need to run. */
export const HOSTED_RUNNER_ENV_NAMES: readonly string[] = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TMPDIR",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TERM",
  "NO_COLOR",
  "FORCE_COLOR",
  // Reaching the console and the engines' registries through a proxy or a private CA.
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  // Engine CLIs' own caches and homes.
  "TF_PLUGIN_CACHE_DIR",
  "PULUMI_HOME",
  // Set only by the test harnesses (README "Tests"): enables the test gate resource.
  "PLANTON_TEST_GATES_DIR",
];

/**
 * Prefixes a hosted runner inherits: locale settings, the runner's own settings (runner/config.ts), and
 * OpenTelemetry's (OTEL_EXPORTER_OTLP_ENDPOINT and the SDK's own), so its steps join the console's traces.
 */
export const HOSTED_RUNNER_ENV_PREFIXES: readonly string[] = ["LC_", "PLANTON_RUNNER_", "OTEL_"];

export const hostedRunnerMayInherit = (name: string): boolean =>
  HOSTED_RUNNER_ENV_NAMES.includes(name) || HOSTED_RUNNER_ENV_PREFIXES.some((p) => name.startsWith(p));

/** The allow-listed part of `from`, then `own` (the runner's token, name, …) on top. */
export function hostedRunnerEnv(from: Record<string, string | undefined>, own: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(from)) if (value !== undefined && hostedRunnerMayInherit(name)) env[name] = value;
  return { ...env, ...own };
}
