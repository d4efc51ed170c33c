// The preflight report: the four essentials (and the secrets and variables a spec references),
// each resolved or not, with the places looked at and the fix. The server writes it; the console,
// the CLI and scripts read it.
export const ESSENTIALS = ["module", "credentials", "backend", "flow_control", "secrets"] as const;
export type Essential = (typeof ESSENTIALS)[number];

export interface PreflightCheck {
  essential: Essential;
  passed: boolean;
  /** What it resolved to, in words (`static-site@1.0.0 (builtin, platform registry)`), or null. */
  resolvedTo: string | null;
  /** Each names what is missing and the fix. */
  errors: string[];
  /** The places looked at, most specific first, and what was found there. */
  visited: string[];
}

export interface PreflightReport {
  passed: boolean;
  checks: PreflightCheck[];
  /** The first error, the job's reason when preflight fails. */
  reason: string | null;
}
