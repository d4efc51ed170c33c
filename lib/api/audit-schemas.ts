// The audit record on the public API, defined once: the tRPC procedures declare these as input and
// output, REST and the OpenAPI document are generated from them, lib/client, the CLI, the Audit page
// and the exports take their types and columns from them.
import { z } from "zod";
import { AUDIT_ACTION_NAMES, AUDIT_RESULTS, AUDIT_TARGET_KIND_NAMES, isAuditActionOrFamily } from "../audit";
import { timestamp } from "./schemas";

/** An action ("job.approve") or a family of them ("job"). */
const actionFilter = z
  .string()
  .trim()
  .refine(isAuditActionOrFamily, {
    error: `Action must be one the record keeps (${AUDIT_ACTION_NAMES.slice(0, 3).join(", ")}, …: the Audit page's Action filter lists them all) or a family of them (job, component, …)`,
  });

const when = z.iso.datetime({ offset: true, error: "Give a time as ISO 8601, for example 2026-11-24T00:00:00Z" });

/** The filters the Audit page, `planton audit list`, GET /audit and the exports share. */
export const auditFilterInput = z.object({
  actor: z.string().trim().min(1).optional().meta({ description: "Who acted: an email, an API token's name or \"system\"" }),
  action: actionFilter.optional(),
  targetKind: z.enum(AUDIT_TARGET_KIND_NAMES).optional(),
  target: z.string().trim().min(1).optional().meta({ description: "The target's name or id" }),
  /** A component's slice: its own events and its jobs'. */
  component: z.string().trim().min(1).optional().meta({ description: "A component's id: its events and its jobs' events" }),
  environment: z.string().trim().min(1).optional(),
  result: z.enum(AUDIT_RESULTS).optional(),
  from: when.optional().meta({ description: "Events at or after this time" }),
  to: when.optional().meta({ description: "Events before this time" }),
  q: z.string().trim().max(200).optional().meta({ description: "Words the summary, actor, action or target name start with" }),
});
export type AuditFilter = z.infer<typeof auditFilterInput>;

export const listAuditInput = auditFilterInput.extend({
  cursor: z.string().optional().meta({ description: "The nextCursor of the previous page" }),
  limit: z.number().int().min(1).max(200).default(50),
});

export const auditEventSchema = z
  .object({
    id: z.string(),
    seq: z.number().int().meta({ description: "Position in the organization's chain, from 1" }),
    at: timestamp,
    actorId: z.string().nullable(),
    actorLabel: z.string(),
    action: z.string(),
    actionTitle: z.string().meta({ description: "The action in words: \"approved a job\"" }),
    targetKind: z.string(),
    targetId: z.string().nullable(),
    targetName: z.string().nullable(),
    targetHref: z.string().nullable().meta({ description: "The target's page in the console" }),
    environment: z.string().nullable(),
    result: z.enum(AUDIT_RESULTS),
    summary: z.string(),
    changes: z.unknown().meta({ description: "The detail: field-level changes, the plan checksum approved, …; secrets by name, never value" }),
    clientAddress: z.string().nullable(),
    prevHash: z.string(),
    hash: z.string(),
  })
  .meta({ id: "AuditEvent" });
export type AuditEventView = z.infer<typeof auditEventSchema>;

export const auditPageSchema = z
  .object({ events: z.array(auditEventSchema), nextCursor: z.string().nullable().meta({ description: "Pass as ?cursor= for the next page; null on the last" }) })
  .meta({ id: "AuditPage" });

/** The columns of a CSV export, in order. */
export const AUDIT_CSV_COLUMNS = ["seq", "at", "actorLabel", "action", "targetKind", "targetName", "targetId", "environment", "result", "summary", "clientAddress", "changes", "hash"] as const satisfies readonly (keyof AuditEventView)[];

export const auditVerifySchema = z
  .object({
    ok: z.boolean(),
    checked: z.number().int().meta({ description: "Events checked" }),
    head: z.object({ seq: z.number().int(), hash: z.string() }).meta({ description: "The chain's last link: keep it outside Planton to prove later that nothing was rewritten" }),
    from: z.object({ seq: z.number().int(), hash: z.string(), checkpoint: z.string().nullable() }).meta({ description: "Where the check started: the genesis, or the last archive checkpoint" }),
    broken: z
      .object({
        eventId: z.string().nullable(),
        seq: z.number().int(),
        problem: z.enum(["content", "link", "missing", "head"]),
        message: z.string().meta({ description: "Which event, what differs" }),
        expected: z.string().nullable(),
        found: z.string().nullable(),
      })
      .nullable(),
  })
  .meta({ id: "AuditVerification" });
export type AuditVerification = z.infer<typeof auditVerifySchema>;

/** The seals of the retention archive: each names its file, the file's SHA-256 and the last event it holds. */
export const auditCheckpointSchema = z
  .object({
    id: z.string(),
    throughSeq: z.number().int().meta({ description: "The last event the archive holds; the first event kept links to its hash" }),
    throughHash: z.string(),
    eventCount: z.number().int(),
    archiveName: z.string().meta({ description: "The file's name in the server's PLANTON_AUDIT_ARCHIVE_DIR" }),
    archiveSha256: z.string().meta({ description: "SHA-256 of the file's bytes, hex: `planton audit verify --archive FILE` compares it" }),
    createdAt: timestamp,
  })
  .meta({ id: "AuditCheckpoint" });
export const auditCheckpointListSchema = z.object({ checkpoints: z.array(auditCheckpointSchema) }).meta({ id: "AuditCheckpointList" });
