// The shapes of runners on the public API, defined once: the tRPC procedures declare them as input and
// output, REST and the OpenAPI document are generated from them, lib/client, the CLI and the Runners page
// take their types from them.
import { z } from "zod";
import { PROVISIONERS } from "../catalog";
import { RUNNER_STATUSES } from "../runner-routing";
import { timestamp } from "./schemas";
import { nameSchema } from "../names";

export const runnerNameSchema = nameSchema("prod-runner");

/** A runner named in a path or body: its name (or its id). */
export const runnerRefInput = z.object({ runner: z.string().trim().min(1).meta({ description: "The runner's name (or id)" }) });

/** POST /runners */
export const registerRunnerBody = z.object({
  name: runnerNameSchema,
  capacity: z.number().int().min(1).max(64).default(2).meta({ description: "Jobs it runs at once" }),
  labels: z.record(z.string(), z.string()).default({}),
});

export const runnerJobSchema = z.object({
  id: z.string(),
  component: z.string(),
  environment: z.string(),
  operation: z.string(),
  status: z.string(),
  result: z.string().nullable(),
  createdAt: timestamp,
});

export const runnerSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.enum(["hosted", "self_hosted"]),
    status: z.enum(RUNNER_STATUSES),
    lastSeenAt: timestamp.nullable().meta({ description: "Its last claim or heartbeat" }),
    version: z.string().nullable(),
    labels: z.record(z.string(), z.string()),
    engines: z.partialRecord(z.enum(PROVISIONERS), z.string()).meta({ description: "The engines it reported, provisioner → version" }),
    capacity: z.number().int(),
    running: z.number().int().meta({ description: "Jobs it runs now" }),
    isDefault: z.boolean(),
    /** Connections that name it. */
    connections: z.array(z.string()),
    revokedAt: timestamp.nullable(),
    createdAt: timestamp,
  })
  .meta({ id: "Runner" });

/** GET /runners: the organization's own runners and the Planton-hosted ones that serve it. */
export const runnerListSchema = z
  .object({
    runners: z.array(runnerSchema),
    /** The organization's default runner's name; null means Planton-hosted. */
    default: z.string().nullable(),
  })
  .meta({ id: "RunnerList" });

/** GET /runners/{runner}: one runner with its recent jobs. */
export const runnerDetailSchema = runnerSchema.extend({ runningJobs: z.array(runnerJobSchema), recentJobs: z.array(runnerJobSchema) }).meta({ id: "RunnerDetail" });

/** POST /runners and POST /runners/{runner}/rotate-token: the token, shown once (lib/runner-routing.ts runnerStartCommand makes the command that starts the runner with it, from the URL the caller reached). */
export const runnerTokenSchema = z
  .object({
    runner: runnerSchema,
    token: z.string().meta({ description: "rnr_…: shown once; the server keeps only its hash" }),
    /** Jobs it was running, failed because their credentials stopped working (rotate only). */
    failedJobs: z.array(z.string()),
  })
  .meta({ id: "RunnerToken" });

export const runnerRevokedSchema = z.object({ runner: runnerSchema, failedJobs: z.array(z.string()) }).meta({ id: "RunnerRevoked" });

/** GET /runners/default (and what PUT/DELETE answer): where deploys run when a connection names no runner. */
export const defaultRunnerSchema = z
  .object({
    runner: z.string().nullable().meta({ description: "The default runner's name; null means a Planton-hosted runner" }),
    description: z.string(),
  })
  .meta({ id: "DefaultRunner" });
