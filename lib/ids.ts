import { monotonicFactory } from "ulid";

// Monotonic: ids made in one millisecond, or after the clock steps back, still sort in creation order.
const ulid = monotonicFactory();

export const ID_PREFIXES = {
  organization: "org",
  environment: "env",
  user: "usr",
  session: "ses",
  account: "acc",
  verification: "ver",
  membership: "mem",
  apiToken: "tok",
  invitation: "inv",
  catalogKind: "knd",
  iacModule: "mod",
  connection: "conn",
  connectionAuthorization: "cauth",
  secret: "sec",
  variable: "var",
  stateBackend: "sb",
  flowControlPolicy: "fcp",
  infraComponent: "cmp",
  runner: "rnr",
  auditEvent: "aud",
  auditCheckpoint: "ack",
  infraJob: "job",
  jobOperation: "op",
  artifact: "art",
  approval: "apr",
  runnerAttempt: "run",
  stateObject: "st",
  stateVersion: "stv",
  stateMove: "smv",
  stateMoveItem: "smi",
  jobCredential: "jcr",
  /** An unexpected server error, as the answer and the server log name it. */
  error: "err",
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** A prefixed, time-sortable id such as `job_01JD3…`. The service allocates every id. */
export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${ulid()}`;
}

export function idKindOf(id: string): IdKind | undefined {
  const prefix = id.split("_")[0];
  return (Object.keys(ID_PREFIXES) as IdKind[]).find((k) => ID_PREFIXES[k] === prefix);
}
