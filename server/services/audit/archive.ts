// The retention archive (off unless PLANTON_AUDIT_RETENTION_DAYS is set): per chain, events older
// than the retention are written to a gzip JSON-lines file (0600, fsynced), sealed by an
// audit_checkpoints row (the last event's seq and hash, the count, the file's SHA-256) with an
// `audit.archive` event, and only then deleted — the database refuses to delete unsealed rows.
// Sealing and deleting are separate steps: a crash between them leaves sealed rows that are still
// verifiable, and the next run deletes them first. Verify then starts from the checkpoint.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { createGzip, gunzipSync } from "node:zlib";
import { and, asc, desc, eq, gt, isNull, lte, sql, type SQL } from "drizzle-orm";
import { AUDIT_ARCHIVE_LOCK } from "@/db/advisory-locks";
import { rowsOf, type Database, type Queryable } from "@/db/client";
import { auditCheckpoints, auditEvents } from "@/db/schema";
import { AUDIT_GENESIS_HASH } from "@/lib/audit";
import { newId } from "@/lib/ids";
import { systemActor } from "../../actor";
import { recordAudit } from "../../audit";
import { chainStart } from "./verify";

const BATCH = 5_000;
const DAY_MS = 86_400_000;

export interface ArchiveConfig {
  retentionDays: number;
  dir: string;
}

export interface ArchiveRun {
  chain: string;
  checkpointId: string;
  fromSeq: number;
  throughSeq: number;
  eventCount: number;
  archiveName: string;
  archiveSha256: string;
}

/** The rows of one chain ("" holds the events recorded outside any organization). */
const inChain = (chain: string): SQL => (chain ? eq(auditEvents.orgId, chain) : isNull(auditEvents.orgId));

/** Runs `fn` only while this replica holds the archive's lock; null when another one does. */
async function asLeader<T>(db: Database, fn: (tx: Queryable) => Promise<T>): Promise<T | null> {
  return db.transaction(async (tx) => {
    const [leader] = rowsOf<{ ok: boolean }>(await tx.execute(sql`select pg_try_advisory_xact_lock(${AUDIT_ARCHIVE_LOCK}) as ok`));
    return leader?.ok ? fn(tx) : null;
  });
}

/** Deletes the chain's rows a checkpoint has sealed (all of them, a batch per transaction); returns how many. */
export async function deleteSealed(db: Database, chain: string): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await asLeader(db, async (tx) => {
      const [k] = await tx.select().from(auditCheckpoints).where(eq(auditCheckpoints.chain, chain)).orderBy(desc(auditCheckpoints.throughSeq)).limit(1);
      if (!k) return 0;
      const doomed = tx.select({ id: auditEvents.id }).from(auditEvents).where(and(inChain(chain), lte(auditEvents.seq, Number(k.throughSeq)))).limit(BATCH);
      const gone = await tx.delete(auditEvents).where(sql`${auditEvents.id} in (${doomed})`).returning({ id: auditEvents.id });
      return gone.length;
    });
    if (!n) return total;
    total += n;
  }
}

/** The last seq of the chain's events older than `before`, counting only an unbroken run from the start (seq order and time order may differ by a commit). */
async function throughSeqBefore(tx: Queryable, chain: string, after: number, before: Date): Promise<number | null> {
  const [r] = rowsOf<{ through: string | number | null }>(
    await tx.execute(sql`
      select coalesce(
        (select min(seq) - 1 from audit_events where ${inChain(chain)} and seq > ${after} and created_at >= ${before.toISOString()}),
        (select max(seq) from audit_events where ${inChain(chain)} and seq > ${after})
      ) as through`),
  );
  const through = r?.through == null ? null : Number(r.through);
  return through !== null && through > after ? through : null;
}

/** Writes the chain's events (after, through] to `file` as gzip JSON lines, each checked against its hash and link; returns the file's SHA-256 and the last hash. */
async function writeArchive(tx: Queryable, chain: string, from: { seq: number; hash: string }, through: number, file: string) {
  const hash = createHash("sha256");
  const tmp = `${file}.partial`;
  const out = fs.createWriteStream(tmp, { mode: 0o600, flags: "w" });
  const gzip = createGzip();
  gzip.on("data", (b: Buffer) => hash.update(b));
  gzip.pipe(out);
  const closed = new Promise<void>((resolve, reject) => (out.on("close", resolve), out.on("error", reject), gzip.on("error", reject)));
  let last = from;
  let count = 0;
  try {
    for (;;) {
      const rows = rowsOf<{ line: unknown; seq: string | number; prev_hash: string; hash: string; sound: boolean }>(
        await tx.execute(sql`
          select to_jsonb(audit_events) - 'search' - 'chain_high_at' as line, seq, prev_hash, hash, hash = audit_digest(prev_hash, seq, audit_events) as sound
          from audit_events where ${inChain(chain)} and seq > ${last.seq} and seq <= ${through} order by seq limit ${BATCH}`),
      );
      if (!rows.length) break;
      for (const r of rows) {
        // A broken chain is never sealed: the archive would vouch for what verify should report.
        if (Number(r.seq) !== last.seq + 1 || r.prev_hash !== last.hash || !r.sound) {
          throw new Error(`event #${last.seq + 1} of chain ${chain || "(no organization)"} does not verify; nothing was archived (run planton audit verify)`);
        }
        const line = typeof r.line === "string" ? r.line : JSON.stringify(r.line);
        if (!gzip.write(`${line}\n`)) await new Promise((resolve) => gzip.once("drain", resolve));
        last = { seq: Number(r.seq), hash: r.hash };
        count++;
      }
    }
    gzip.end();
    await closed;
    const fd = fs.openSync(tmp, "r+");
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, file);
    const dirFd = fs.openSync(path.dirname(file), "r");
    fs.fsyncSync(dirFd);
    fs.closeSync(dirFd);
  } catch (err) {
    gzip.destroy();
    out.destroy();
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  if (last.seq !== through) throw new Error(`chain ${chain || "(no organization)"} ends at #${last.seq}, not #${through}; nothing was archived`);
  return { sha256: hash.digest("hex"), throughHash: last.hash, count };
}

/**
 * Seals one chain's events older than the retention: the file, the checkpoint and the
 * `audit.archive` event commit together or not at all. Returns null when nothing is old enough.
 */
export async function sealChain(db: Database, chain: string, cfg: ArchiveConfig, now = new Date()): Promise<ArchiveRun | null> {
  fs.mkdirSync(cfg.dir, { recursive: true, mode: 0o700 });
  const sealed = await asLeader(db, async (tx) => {
    const from = await chainStart(tx, chain);
    const through = await throughSeqBefore(tx, chain, from.seq, new Date(now.getTime() - cfg.retentionDays * DAY_MS));
    if (through === null) return null;
    const archiveName = `audit-${chain || "no-organization"}-${String(from.seq + 1).padStart(12, "0")}-${String(through).padStart(12, "0")}.jsonl.gz`;
    const file = path.join(cfg.dir, archiveName);
    const w = await writeArchive(tx, chain, from, through, file);
    const checkpointId = newId("auditCheckpoint");
    await tx.insert(auditCheckpoints).values({ id: checkpointId, chain, throughSeq: through, throughHash: w.throughHash, eventCount: w.count, archiveName, archiveSha256: w.sha256 });
    const run: ArchiveRun = { chain, checkpointId, fromSeq: from.seq + 1, throughSeq: through, eventCount: w.count, archiveName, archiveSha256: w.sha256 };
    await recordAudit(tx, systemActor(chain), {
      action: "audit.archive",
      targetId: chain || null,
      summary: `Archived events #${run.fromSeq}–#${through} (${w.count}, older than ${cfg.retentionDays} days) to ${archiveName}, sealed by checkpoint ${checkpointId}`,
      changes: { checkpoint: checkpointId, fromSeq: run.fromSeq, throughSeq: through, throughHash: w.throughHash, eventCount: w.count, archiveName, archiveSha256: w.sha256 },
    });
    return run;
  });
  return sealed ?? null;
}

/** One archive run over every chain: first the deletes a crash left unfinished, then new seals and their deletes. */
export async function archiveAudit(db: Database, cfg: ArchiveConfig, now = new Date()): Promise<ArchiveRun[]> {
  const chains = rowsOf<{ chain: string }>(await db.execute(sql`select chain from audit_chain_heads order by chain`)).map((r) => r.chain);
  const runs: ArchiveRun[] = [];
  for (const chain of chains) {
    await deleteSealed(db, chain);
    const run = await sealChain(db, chain, cfg, now);
    if (!run) continue;
    await deleteSealed(db, chain);
    runs.push(run);
  }
  return runs;
}

/** The chain's checkpoints, oldest first (GET /audit/checkpoints). */
export async function listCheckpoints(db: Queryable, chain: string) {
  const rows = await db.select().from(auditCheckpoints).where(eq(auditCheckpoints.chain, chain)).orderBy(asc(auditCheckpoints.throughSeq));
  return { checkpoints: rows.map(({ chain: _chain, ...k }) => ({ ...k, throughSeq: Number(k.throughSeq) })) };
}

export interface ArchiveCheck {
  ok: boolean;
  checkpointId: string | null;
  events: number;
  problem: string | null;
}

/**
 * Checks an archive file against its checkpoint: the file's SHA-256, and every line recomputed with
 * the database's audit_digest (no copy of it here), linked from the previous checkpoint to this one's hash.
 */
export async function checkArchiveFile(db: Queryable, chain: string, file: string): Promise<ArchiveCheck> {
  const bytes = fs.readFileSync(file);
  const sha = createHash("sha256").update(bytes).digest("hex");
  const all = await db.select().from(auditCheckpoints).where(eq(auditCheckpoints.chain, chain)).orderBy(asc(auditCheckpoints.throughSeq));
  const i = all.findIndex((k) => k.archiveName === path.basename(file) || k.archiveSha256 === sha);
  if (i < 0) return { ok: false, checkpointId: null, events: 0, problem: `${path.basename(file)} is not an archive any checkpoint of this organization seals.` };
  const k = all[i];
  const fail = (problem: string, events = 0): ArchiveCheck => ({ ok: false, checkpointId: k.id, events, problem });
  if (sha !== k.archiveSha256) return fail(`${path.basename(file)} has SHA-256 ${sha}, and checkpoint ${k.id} sealed ${k.archiveSha256}: the file was changed after it was archived.`);
  const lines = gunzipSync(bytes).toString("utf8").split("\n").filter(Boolean);
  let last = i > 0 ? { seq: Number(all[i - 1].throughSeq), hash: all[i - 1].throughHash } : { seq: Number(lines.length ? JSON.parse(lines[0]).seq : 1) - 1, hash: AUDIT_GENESIS_HASH };
  for (let at = 0; at < lines.length; at += 1000) {
    const rows = rowsOf<{ seq: string | number; prev_hash: string; hash: string; recomputed: string }>(
      await db.execute(sql`select r.seq, r.prev_hash, r.hash, audit_digest(r.prev_hash, r.seq, r) as recomputed
        from jsonb_populate_recordset(null::audit_events, ${`[${lines.slice(at, at + 1000).join(",")}]`}::jsonb) r`),
    );
    for (const r of rows) {
      if (Number(r.seq) !== last.seq + 1 || r.prev_hash !== last.hash || r.hash !== r.recomputed) return fail(`event #${r.seq} in ${path.basename(file)} does not verify.`, Number(r.seq) - 1);
      last = { seq: Number(r.seq), hash: r.hash };
    }
  }
  if (lines.length !== k.eventCount || last.seq !== Number(k.throughSeq) || last.hash !== k.throughHash) {
    return fail(`${path.basename(file)} ends at #${last.seq} after ${lines.length} events, and checkpoint ${k.id} sealed #${k.throughSeq} after ${k.eventCount}.`, lines.length);
  }
  return { ok: true, checkpointId: k.id, events: lines.length, problem: null };
}

/** Archives every `intervalMs` (6 hours by default) while the retention is set; a no-op otherwise. */
export function startAuditArchiver(db: Database, cfg: ArchiveConfig | null, opts: { intervalMs?: number; log?: (msg: string) => void } = {}): { stop(): void } {
  if (!cfg) return { stop() {} };
  const log = opts.log ?? ((m) => console.log(`[audit-archive] ${m}`));
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      for (const r of await archiveAudit(db, cfg)) log(`${r.chain || "(no organization)"}: events #${r.fromSeq}–#${r.throughSeq} archived to ${r.archiveName} (sha256 ${r.archiveSha256}), checkpoint ${r.checkpointId}`);
    } catch (err) {
      log(`run failed, nothing was deleted that was not sealed: ${(err as Error).message}`);
    } finally {
      running = false;
    }
  };
  void tick();
  const timer = setInterval(tick, opts.intervalMs ?? 6 * 3_600_000);
  timer.unref?.();
  return { stop: () => clearInterval(timer) };
}
