// The preflight report: the four essentials (and the secrets and variables a spec references),
// each resolved or not, with the places looked at and the fix. The server writes it; the console,
// the CLI and scripts read it.
import type { z } from "zod";
import type { preflightCheckSchema, preflightReportSchema } from "./api/schemas";

export const ESSENTIALS = ["module", "credentials", "backend", "flow_control", "secrets"] as const;
export type Essential = (typeof ESSENTIALS)[number];

/** The report's shapes are defined once, in the API schemas (lib/api/schemas.ts). */
export type PreflightCheck = z.infer<typeof preflightCheckSchema>;
export type PreflightReport = z.infer<typeof preflightReportSchema>;
