// The retention archive on both drivers: old events go to a sealed gzip file and leave the table,
// verify then starts from the checkpoint, the file checks against it, and a crash between the seal
// and the delete leaves everything verifiable until the next run finishes the delete.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { asc, eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { seedTestOrg, type TestOrg } from "../../../test/fixtures";
import { auditCheckpoints, auditEvents } from "@/db/schema";
import { recordAudit } from "../../audit";
import { archiveAudit, checkArchiveFile, listCheckpoints, sealChain } from "./archive";
import { verifyChain } from "./verify";

let t: TestDatabase;
let org: TestOrg;
let dir: string;

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "audit-archive-"));
  for (let i = 1; i <= 5; i++) {
    // Each event in a millisecond of its own: the retention cut is a JavaScript Date (milliseconds), and two events
    // recorded within one millisecond (a fast machine) would fall on the same side of it.
    const tick = Date.now();
    while (Date.now() === tick);
    await recordAudit(t.db, org.actor(), { action: "variable.create", targetName: `v${i}`, summary: `event ${i}` });
  }
});
afterAll(async () => {
  await t.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const chainRows = () => t.db.select().from(auditEvents).where(eq(auditEvents.orgId, org.orgId)).orderBy(asc(auditEvents.seq));

describe("audit retention archive", () => {
  it("seals, survives a crash before the delete, deletes on the next run, and verifies from the checkpoint", async () => {
    const rows = await chainRows();
    const kept = rows[3];
    // "Now" is 30 days after the first event kept was recorded: everything before it is older than the retention.
    const cfg = { retentionDays: 30, dir };
    const now = new Date(kept.createdAt.getTime() + 30 * 86_400_000);

    const run = await sealChain(t.db, org.orgId, cfg, now);
    expect(run).toMatchObject({ chain: org.orgId, fromSeq: 1, throughSeq: 3, eventCount: 3 });
    const file = path.join(dir, run!.archiveName);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(createHash("sha256").update(fs.readFileSync(file)).digest("hex")).toBe(run!.archiveSha256);
    expect(gunzipSync(fs.readFileSync(file)).toString().trim().split("\n").map((l) => JSON.parse(l).id)).toEqual(rows.slice(0, 3).map((r) => r.id));
    const [checkpoint] = (await listCheckpoints(t.db, org.orgId)).checkpoints;
    expect(checkpoint).toMatchObject({ id: run!.checkpointId, throughSeq: 3, throughHash: rows[2].hash, eventCount: 3, archiveSha256: run!.archiveSha256 });

    // The crash: sealed, not yet deleted. Everything still verifies, from the checkpoint.
    expect((await chainRows()).length).toBe(rows.length + 1);
    const mid = await verifyChain(t.db, org.orgId);
    expect(mid).toMatchObject({ ok: true, from: { seq: 3, hash: rows[2].hash, checkpoint: run!.checkpointId }, checked: rows.length - 3 + 1 });
    const [archived] = (await chainRows()).filter((r) => r.action === "audit.archive");
    expect(archived).toMatchObject({ actorLabel: "system", seq: rows.length + 1, changes: expect.objectContaining({ checkpoint: run!.checkpointId, archiveSha256: run!.archiveSha256 }) });

    // The next run finishes the delete and seals nothing new.
    expect(await archiveAudit(t.db, cfg, now)).toEqual([]);
    const left = await chainRows();
    expect(left.map((r) => r.seq)).toEqual([4, 5, 6, 7]);
    expect(await verifyChain(t.db, org.orgId)).toMatchObject({ ok: true, checked: 4, broken: null, head: { seq: 7, hash: left.at(-1)!.hash } });
    expect(await checkArchiveFile(t.db, org.orgId, file)).toEqual({ ok: true, checkpointId: run!.checkpointId, events: 3, problem: null });
  });

  it("refuses an archive file changed after it was sealed", async () => {
    const [k] = await t.db.select().from(auditCheckpoints).where(eq(auditCheckpoints.chain, org.orgId));
    const file = path.join(dir, k.archiveName);
    const original = fs.readFileSync(file);
    const bytes = Buffer.from(original);
    bytes[bytes.length - 5] ^= 0xff;
    fs.writeFileSync(file, bytes);
    const check = await checkArchiveFile(t.db, org.orgId, file);
    expect(check).toMatchObject({ ok: false, checkpointId: k.id });
    expect(check.problem).toMatch(new RegExp(`^${k.archiveName.replaceAll(".", "\\.")} has SHA-256 [0-9a-f]{64}, and checkpoint ${k.id} sealed ${k.archiveSha256}: the file was changed after it was archived\\.$`));
    fs.writeFileSync(file, original);
  });
});
