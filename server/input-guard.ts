// Input no edge should pass on: strings with NUL bytes or lone UTF-16 surrogates (Postgres refuses
// the first, and neither is text anyone meant), JSON nested deeper than any payload of the product,
// bodies beyond a bound, and seqs that are not 32-bit. Each edge (tRPC, REST, the runner API) asks
// here, so bad input is a 400 naming what was wrong and what was not done, never a server error.
import { TRPC_MAX_BODY_BYTES } from "@/lib/trpc/limits";
import { unstorableMessage, unstorableText } from "@/lib/secrets";
import { PlantonError } from "./errors";
import { heldBody } from "./held-bodies";

/** Deeper than any spec, plan or event payload the product reads. */
export const MAX_INPUT_DEPTH = 64;
/** A request body of the procedures, over tRPC (server/web-edge.ts) or REST: the same bound. */
export const MAX_BODY_BYTES = TRPC_MAX_BODY_BYTES;
/** A runner's uploads (event batches, outputs, state) are larger. */
export const MAX_RUNNER_BODY_BYTES = 64 * 1024 * 1024;

const describe = (path: string[]) => (path.length ? path.join(".") : "input");

export interface UnsafeInput {
  /** Where: the field path (`spec.name`), empty for the input itself. */
  path: string[];
  why: string;
  /** A text the database cannot store (NUL, lone surrogate), rather than a shape no payload has. */
  text?: boolean;
}

/** What is wrong with `value` and where, or null when nothing is. Text rules: lib/secrets.ts `unstorableText`. */
export function unsafeInput(value: unknown, path: string[] = [], depth = 0): UnsafeInput | null {
  if (depth > MAX_INPUT_DEPTH) return { path, why: `it is nested more than ${MAX_INPUT_DEPTH} levels deep` };
  if (typeof value === "string") {
    const why = unstorableText(value);
    return why ? { path, why, text: true } : null;
  }
  if (typeof value === "number") return Number.isFinite(value) ? null : { path, why: "it is not a finite number" };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = unsafeInput(value[i], [...path, String(i)], depth + 1);
      if (bad) return bad;
    }
    return null;
  }
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const keyWhy = unstorableText(k);
      if (keyWhy) return { path, why: `a key ${keyWhy}`, text: true };
      const bad = unsafeInput(v, [...path, k], depth + 1);
      if (bad) return bad;
    }
  }
  return null;
}

/** Throws the product's 400 on the field that holds the unsafe value (the form shows it there). */
export function assertSafeInput(value: unknown): void {
  const bad = unsafeInput(value);
  if (!bad) return;
  const message = bad.text ? unstorableMessage(describe(bad.path), bad.why) : `Nothing was done: the ${describe(bad.path)} is refused: ${bad.why}. Send a plainer value.`;
  throw new PlantonError("BAD_REQUEST", message, bad.path[0]);
}

/** Reads a request body as text, refusing one over `limit` bytes before it is all in memory. */
export async function readBodyText(req: Request, limit: number): Promise<string> {
  return (await readBodyBytes(req, limit)).toString("utf8");
}

/** Reads a request body's bytes, refusing one over `limit` before it is all in memory. */
export async function readBodyBytes(req: Request, limit: number): Promise<Buffer> {
  const bytes = await boundedBody(req, limit);
  if (!bytes) throw tooLarge(limit);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The request's body, read up to `limit` bytes; null when it is larger (by Content-Length, or as it streams in). */
export async function boundedBody(req: Request, limit: number): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > limit) return null;
  const got = heldBody(req);
  if (got !== undefined) {
    const bytes = typeof got === "string" ? Buffer.from(got) : got;
    return bytes.byteLength > limit ? null : new Uint8Array(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
  }
  if (!req.body) return new Uint8Array();
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.byteLength;
  }
  return body;
}

const tooLarge = (limit: number) => new PlantonError("BAD_REQUEST", `Nothing was done: the body is larger than ${Math.round(limit / 1024 / 1024)} MiB. Send less at a time.`);

/** Parses a JSON body; a body that is not JSON (or is nested past reason) is the product's 400. */
export function parseJsonBody(text: string): unknown {
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new PlantonError("BAD_REQUEST", "Nothing was done: the body is not JSON.");
  }
}

/** The last seq a reader saw (`Last-Event-ID`, `?after=`): a whole number from 0 up to 2³¹−1. */
export function lastSeenSeq(raw: string | null | undefined, what = "Last-Event-ID"): number {
  if (raw === null || raw === undefined || raw === "") return 0;
  if (!/^\d{1,10}$/.test(raw) || Number(raw) > 2 ** 31 - 1) {
    throw new PlantonError("BAD_REQUEST", `Nothing was done: ${what} must be the seq of the last event seen, a whole number from 0 to 2147483647.`);
  }
  return Number(raw);
}
