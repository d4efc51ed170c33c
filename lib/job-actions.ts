// What a caller may do with an Infra Job now, as the server computes it (server/services/jobs/lifecycle.ts
// `jobActions`) and every surface renders it: the job page, the jobs list, the CLI.
import type { z } from "zod";
import type { jobActionsSchema } from "./api/schemas";

/** Defined once, in the API schemas (lib/api/schemas.ts). */
export type JobActions = z.infer<typeof jobActionsSchema>;
export type JobAction = JobActions["rerun"];
