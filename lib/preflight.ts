// The preflight report: the four essentials (and the secrets and variables a spec references),
// each resolved or not, with the places looked at and the fix. The server writes it; the console,
// the CLI and scripts read it.
import type { z } from "zod";
import type { jobModuleSchema, preflightCheckSchema, preflightReportSchema } from "./api/schemas";

export const ESSENTIALS = ["module", "credentials", "backend", "runner", "flow_control", "secrets"] as const;
export type Essential = (typeof ESSENTIALS)[number];

/** Each essential's name, as the preflight report in the console and the CLI heads it. */
export const ESSENTIAL_LABEL: Record<Essential, string> = {
  module: "IaC module",
  credentials: "Provider credentials",
  backend: "State backend",
  runner: "Runner",
  flow_control: "Flow control",
  secrets: "Secrets",
};

/** The report's shapes are defined once, in the API schemas (lib/api/schemas.ts). */
export type PreflightCheck = z.infer<typeof preflightCheckSchema>;
export type PreflightReport = z.infer<typeof preflightReportSchema>;
/** The module version a job runs and its registry (lib/api/schemas.ts jobModuleSchema). */
export type JobModule = z.infer<typeof jobModuleSchema>;
