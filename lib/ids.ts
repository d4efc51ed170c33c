import { randomBytes } from "node:crypto";

// Crockford base32, as ULID uses: ids sort by creation time as plain strings.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let lastTime = 0;
let lastRandom: number[] = [];

function encodeTime(time: number): string {
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[time % 32] + out;
    time = Math.floor(time / 32);
  }
  return out;
}

function nextRandom(time: number): number[] {
  if (time === lastTime && lastRandom.length) {
    // Monotonic within one millisecond: increment the previous random part.
    const r = [...lastRandom];
    for (let i = r.length - 1; i >= 0; i--) {
      if (r[i] < 31) {
        r[i]++;
        return r;
      }
      r[i] = 0;
    }
    return r;
  }
  return [...randomBytes(16)].map((b) => b % 32);
}

export const ID_PREFIXES = {
  organization: "org",
  environment: "env",
  user: "usr",
  session: "ses",
  account: "acc",
  verification: "ver",
  membership: "mem",
  apiToken: "tok",
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
  infraJob: "job",
  jobOperation: "op",
  artifact: "art",
  approval: "apr",
  runnerAttempt: "run",
  stateObject: "st",
  jobCredential: "jcr",
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** A prefixed, time-sortable id such as `job_01JD3…`. The service allocates every id. */
export function newId(kind: IdKind): string {
  const time = Date.now();
  const random = nextRandom(time);
  lastTime = time;
  lastRandom = random;
  return `${ID_PREFIXES[kind]}_${encodeTime(time)}${random.map((n) => ALPHABET[n]).join("")}`;
}

export function idKindOf(id: string): IdKind | undefined {
  const prefix = id.split("_")[0];
  return (Object.keys(ID_PREFIXES) as IdKind[]).find((k) => ID_PREFIXES[k] === prefix);
}
