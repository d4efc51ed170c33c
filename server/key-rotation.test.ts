// Changing the server key: with the old key in PLANTON_SECRET_KEY_PREVIOUS, what it sealed still opens, the database's
// key check passes, and a re-seal moves every value under the new key (conditionally: a value changed meanwhile is
// left to its writer), after which the new key alone opens everything. On the harness's Postgres.
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { artifacts, connections, secrets, serverKeyCheck, stateJournal } from "@/db/schema";
import { newId } from "@/lib/ids";
import { createTestDatabase, type TestDatabase } from "../test/database";
import { draftComponent } from "../test/components";
import { seedTestOrg } from "../test/fixtures";
import { encryptBytes, encryptSecret, openedWith } from "./crypto";
import { resealSentence, resealUnderServerKey } from "./key-rotation";
import { serverKeyMismatch } from "./server-key-check";
import { createJob } from "./services/jobs/create-job";

process.env.PLANTON_SECRET_KEY ??= "0f".repeat(32);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

const old = randomBytes(32);
const next = randomBytes(32);
const opensWith = (sealed: string, key: Buffer) => openedWith(sealed, key)?.toString("utf8") ?? null;

describe("rotating the server key", () => {
  it("keeps everything the old key sealed: the key check passes with it as a previous key, and a re-seal moves every value under the new key", async () => {
    const org = await seedTestOrg(t.db);
    // A database the old key sealed: its key check, a secret, a connection's credentials, a plan artifact, a journal entry.
    expect(await serverKeyMismatch(t.db, old, [])).toBeNull();
    const secretId = newId("secret");
    await t.db.insert(secrets).values({ id: secretId, orgId: org.orgId, name: "DB_PASSWORD", valueEncrypted: encryptSecret("s3cret", old) });
    await t.db.update(connections).set({ credentialsEncrypted: encryptSecret('{"token":"abc"}', old) }).where(eq(connections.id, org.connectionId));
    const component = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "rotating", spec: { site_name: "rotating" } });
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const artifactId = newId("artifact");
    await t.db.insert(artifacts).values({ id: artifactId, jobId: job.id, kind: "plan", name: "plan.json", sha256: "a".repeat(64), size: 4, content: encryptBytes(Buffer.from("PLAN"), old), encrypted: true });
    await t.db.insert(stateJournal).values({ attemptId: "run_x", step: "apply", seq: 1, jobId: job.id, orgId: org.orgId, componentId: component.id, lockId: "l", lineage: "lin", baseSerial: 1, serial: 2, addresses: ["a.b"], change: encryptSecret('{"d":1}', old) });

    // The new key alone is refused, naming the way to rotate; with the old one as previous, it starts and the check moves.
    expect(await serverKeyMismatch(t.db, next, [])).toContain("keep the old one in PLANTON_SECRET_KEY_PREVIOUS");
    expect(await serverKeyMismatch(t.db, next, [old])).toBeNull();
    const [check] = await t.db.select().from(serverKeyCheck);
    expect(opensWith(check.sealed, next)).toBe("planton server key check");

    const report = await resealUnderServerKey(t.db, next, [old]);
    expect(report).toEqual({ resealed: { secrets: 1, "connection credentials": 1, "encrypted artifacts (plans)": 1, "state journal entries": 1 }, unreadable: {}, changedMeanwhile: 0 });
    expect(resealSentence(report!)).toMatch(/Nothing is left under a previous key: PLANTON_SECRET_KEY_PREVIOUS can be removed\.$/);
    const [secret] = await t.db.select().from(secrets).where(eq(secrets.id, secretId));
    const [connection] = await t.db.select().from(connections).where(eq(connections.id, org.connectionId));
    const [artifact] = await t.db.select().from(artifacts).where(eq(artifacts.id, artifactId));
    const [entry] = await t.db.select().from(stateJournal).where(eq(stateJournal.jobId, job.id));
    expect([secret.valueEncrypted, connection.credentialsEncrypted!, artifact.content, entry.change].map((v) => opensWith(v, next))).toEqual(["s3cret", '{"token":"abc"}', "PLAN", '{"d":1}']);
    expect(opensWith(secret.valueEncrypted, old)).toBeNull();
    // Done: the new key alone is the database's key, and a second re-seal finds nothing to do.
    expect(await serverKeyMismatch(t.db, next, [])).toBeNull();
    expect(await resealUnderServerKey(t.db, next, [old])).toEqual({ resealed: {}, unreadable: {}, changedMeanwhile: 0 });
    expect(await resealUnderServerKey(t.db, next, [])).toBeNull();
  });

  it("two consoles re-sealing at once (replicas starting together) re-seal each value once", async () => {
    const org = await seedTestOrg(t.db);
    const ids = Array.from({ length: 30 }, () => newId("secret"));
    await t.db.insert(secrets).values(ids.map((id, i) => ({ id, orgId: org.orgId, name: `ROTATE_${i}`, valueEncrypted: encryptSecret(`v${i}`, old) })));
    const [a, b] = await Promise.all([resealUnderServerKey(t.db, next, [old]), resealUnderServerKey(t.db, next, [old])]);
    // Every value was re-sealed by one of them; where both read it, the second's conditional write found it changed.
    expect((a!.resealed.secrets ?? 0) + (b!.resealed.secrets ?? 0)).toBe(30);
    const rows = await t.db.select().from(secrets).where(eq(secrets.orgId, org.orgId));
    expect(rows.map((r) => opensWith(r.valueEncrypted, next)).sort()).toEqual(ids.map((_, i) => `v${i}`).sort());
  });

  it("leaves a value nobody's key opens, and says which key to add", async () => {
    const org = await seedTestOrg(t.db);
    await t.db.insert(secrets).values({ id: newId("secret"), orgId: org.orgId, name: "FOREIGN", valueEncrypted: encryptSecret("x", randomBytes(32)) });
    const report = await resealUnderServerKey(t.db, next, [old]);
    expect(report?.unreadable).toEqual({ secrets: 1 });
    expect(resealSentence(report!)).toContain("opened by no configured key, left as they are: 1 secrets — keep PLANTON_SECRET_KEY_PREVIOUS and add the key that sealed them.");
  });
});
