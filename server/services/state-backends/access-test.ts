// The access test every create and update of a backend runs before saving (and the wizard runs on its
// own): open the store, write a probe state, read it back, compare checksums, delete it. Each step's
// failure is reduced to one sentence an admin can act on, without a stack or a credential.
import { randomUUID } from "node:crypto";
import type { z } from "zod";
import type { Queryable } from "@/db/client";
import type { accessCheckSchema } from "@/lib/api/state-schemas";
import { STATE_BACKEND_KINDS, type StateBackendKind } from "@/lib/state-backend-kinds";
import { storedStateOf } from "@/state-backends/rules";
import type { StateStore } from "@/state-backends/types";
import { PlantonError } from "../../errors";
import { openStore, type BackendToOpen } from "./open-store";

export type AccessCheck = z.infer<typeof accessCheckSchema>;
type Step = AccessCheck["steps"][number]["step"];

/** Where probes are written: never a component's key (those are <environment>/<component>/…). */
export const ACCESS_PROBE_PREFIX = ".planton-access-probe/";

/** A valid v4 state, so every kind's store accepts it as it would a component's. */
function probeState(lineage: string) {
  const doc = { version: 4, terraform_version: "planton-access-probe", serial: 1, lineage, outputs: {}, resources: [], check_results: null };
  return storedStateOf(new Uint8Array(Buffer.from(JSON.stringify(doc))));
}

/** Known failures by their code or name, in words that name the fix. */
const KNOWN: [RegExp, string][] = [
  [/NoSuchBucket|bucket does not exist/i, "the bucket does not exist; create it, or correct the bucket name"],
  [/ContainerNotFound|container does not exist/i, "the container does not exist; create it, or correct the container name"],
  [/InvalidAccessKeyId|SignatureDoesNotMatch|AuthenticationFailed|AuthorizationFailure|InvalidClientTokenId|password authentication failed|Unauthorized/i, "the connection's credentials were refused; check them in Settings → Connections"],
  [/AccessDenied|Forbidden|permission denied|EACCES|EPERM|must be owner/i, "access was denied; give the connection's identity read, write and delete rights there"],
  [/ENOTFOUND|EAI_AGAIN|getaddrinfo/i, "the host could not be found; check the endpoint or the connection's address"],
  [/ECONNREFUSED/i, "the connection was refused; check that the server is running and the endpoint's port"],
  [/ETIMEDOUT|timed? ?out|ECONNRESET|socket hang up/i, "the server did not answer in time; check the endpoint and that this server can reach it"],
  [/EROFS|read-only file system/i, "the folder is on a read-only file system; choose a writable one"],
  [/ENOSPC/i, "the disk is full"],
  [/ENOTDIR/i, "part of the path is a file, not a folder; choose another path"],
];

/** One clear sentence for what the store threw: no stack, no credentials, no hosts the admin did not type. */
export function accessErrorSentence(err: unknown, secrets: string[] = []): string {
  const e = err as { name?: string; code?: string; Code?: string; message?: string; statusCode?: number; $metadata?: { httpStatusCode?: number }; cause?: { code?: string; message?: string } };
  const status = e?.$metadata?.httpStatusCode ?? e?.statusCode;
  const raw = [e?.name, e?.code, e?.Code, e?.cause?.code, e?.message, e?.cause?.message, status === 401 ? "Unauthorized" : status === 403 ? "Forbidden" : ""].filter(Boolean).join(" ");
  for (const [pattern, words] of KNOWN) if (pattern.test(raw)) return words;
  if (err instanceof PlantonError) return err.message.replace(/\.$/, "");
  let line = (e?.message ?? String(err)).split("\n")[0].trim();
  for (const s of secrets) if (s && s.length >= 4) line = line.split(s).join("***");
  // URLs and hostnames in a library's message may be internal; the admin typed the endpoint already.
  line = line.replace(/https?:\/\/\S+/g, "the endpoint").replace(/\b[a-z0-9-]+(\.[a-z0-9-]+)+:\d+\b/gi, "the endpoint");
  line = line.replace(/[.\s]+$/, "");
  return line.length > 200 ? `${line.slice(0, 197)}…` : line || "the store gave no reason";
}

const STEP_WORDS: Record<Step, string> = {
  open: "opening the store",
  write: "writing a probe state",
  read: "reading the probe back",
  compare: "comparing its checksum",
  delete: "deleting the probe",
};

/** Runs the probe against `backend` (saved or not); never throws. */
export async function runAccessTest(db: Queryable, backend: BackendToOpen, secrets: string[] = []): Promise<AccessCheck> {
  const steps: AccessCheck["steps"] = [];
  const fail = (step: Step, err: unknown): AccessCheck => {
    const why = accessErrorSentence(err, secrets);
    steps.push({ step, ok: false, detail: why });
    const title = STATE_BACKEND_KINDS[backend.kind as StateBackendKind]?.title ?? backend.kind;
    return { ok: false, steps, error: `The access test of ${title} backend ${backend.name} failed at ${STEP_WORDS[step]}: ${why}.` };
  };
  if (backend.kind === "planton_managed") {
    return { ok: true, steps: [{ step: "open", ok: true, detail: "Planton-managed storage is the console's own database" }], error: null };
  }
  let store: StateStore;
  try {
    store = await openStore(db, backend);
    steps.push({ step: "open", ok: true, detail: "opened" });
  } catch (err) {
    return fail("open", err);
  }
  const key = `${ACCESS_PROBE_PREFIX}${randomUUID()}`;
  const probe = probeState(randomUUID());
  try {
    try {
      await store.write(key, probe);
      steps.push({ step: "write", ok: true, detail: `wrote ${key} (${probe.bytes.length} bytes)` });
    } catch (err) {
      return fail("write", err);
    }
    let readBack;
    try {
      readBack = await store.read(key);
      if (!readBack) throw new Error("the probe it had just written was not there");
      steps.push({ step: "read", ok: true, detail: `read ${readBack.bytes.length} bytes` });
    } catch (err) {
      await store.delete(key).catch(() => undefined);
      return fail("read", err);
    }
    if (readBack.checksum !== probe.checksum) {
      await store.delete(key).catch(() => undefined);
      return fail("compare", new Error(`what was read back has checksum ${readBack.checksum.slice(0, 12)}…, not the ${probe.checksum.slice(0, 12)}… written, so the store changes what it keeps`));
    }
    steps.push({ step: "compare", ok: true, detail: `sha256 ${probe.checksum.slice(0, 12)}… matches` });
    try {
      await store.delete(key);
      if (await store.read(key)) throw new Error("the probe was still there after it was deleted");
      steps.push({ step: "delete", ok: true, detail: "deleted" });
    } catch (err) {
      return fail("delete", err);
    }
    return { ok: true, steps, error: null };
  } finally {
    await store.close?.().catch(() => undefined);
  }
}
