// Rotating the server key for real: a console on key A seals a secret and hands a runner a job credential; the
// console is started again with PLANTON_SECRET_KEY=B and PLANTON_SECRET_KEY_PREVIOUS=A on the same Postgres — it
// starts, the runner's credential signed under A still works (its heartbeat renews it under B), and the console
// re-seals what A sealed under B; then B alone starts.
import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runners, secrets } from "../../db/schema";
import { newId } from "../../lib/ids";
import { RunnerClient } from "../../runner/client";
import { encryptSecret, openWith } from "../../server/crypto";
import { registerRunner } from "../../server/services/runners/register-runner";
import { createJob } from "../../server/services/jobs/create-job";
import { draftComponent } from "../components";
import { startConsoleServer, type ConsoleServer } from "../console-server";
import { createTestDatabase, type TestDatabase } from "../database";
import { seedTestOrg } from "../fixtures";

let t: TestDatabase;
const consoles: ConsoleServer[] = [];
beforeAll(async () => {
  t = await createTestDatabase();
}, 120_000);
afterAll(async () => {
  for (const c of consoles) await c.stop().catch(() => {});
  await t?.close();
});

const A = randomBytes(32);
const B = randomBytes(32);
const start = async (env: Record<string, string>) => {
  const c = await startConsoleServer({ databaseUrl: t.url!, hostedRunners: 0, env });
  consoles.push(c);
  return c;
};

describe("rotating the server key on a running installation", () => {
  it("keeps secrets and in-flight job credentials working across the change, and re-seals what the old key sealed", async () => {
    const org = await seedTestOrg(t.db);
    const secretId = newId("secret");
    await t.db.insert(secrets).values({ id: secretId, orgId: org.orgId, name: "API_TOKEN", valueEncrypted: encryptSecret("tok-123", A) });
    const first = await start({ PLANTON_SECRET_KEY: A.toString("hex") });
    const { runner, token } = await registerRunner(t.db, org.actor(), { name: "rotating" });
    await t.db.update(runners).set({ kind: "hosted" }).where(eq(runners.id, runner.id));
    const component = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "StaticSite", name: "keyed", spec: { site_name: "keyed" }, connection: "local-sandbox" });
    const job = await createJob(t.db, org.actor(), { componentId: component.id, operation: "update" });
    const claim = await new RunnerClient(first.url, token).claim({ capacity: 1, waitSeconds: 5 });
    expect(claim?.job.id, `${job.status}: ${job.reason}`).toBe(job.id);
    await first.stop();

    // The new key alone is refused at start, naming the way to rotate.
    const refused = await startConsoleServer({ databaseUrl: t.url!, hostedRunners: 0, env: { PLANTON_SECRET_KEY: B.toString("hex") } }).catch((e: Error) => e);
    expect(String(refused)).toContain("keep the old one in PLANTON_SECRET_KEY_PREVIOUS");

    const rotated = await start({ PLANTON_SECRET_KEY: B.toString("hex"), PLANTON_SECRET_KEY_PREVIOUS: A.toString("hex") });
    await rotated.waitForOutput(/\[key-rotation\] re-sealed under the server key: 1 secrets.*PLANTON_SECRET_KEY_PREVIOUS can be removed\./, "the re-seal's report");
    const [row] = await t.db.select().from(secrets).where(eq(secrets.id, secretId));
    expect(openWith(row.valueEncrypted, B).toString("utf8")).toBe("tok-123");
    // The credential signed under A still works; its renewal is under B.
    const runnerB = new RunnerClient(rotated.url, token);
    const beat = await runnerB.job(job.id, claim!.credential.token).heartbeat(claim!.attemptId);
    expect(beat.signal).toBe("none");
    // Renewed at once (not only near its expiry), so the old key is not needed for the rest of the hour it had.
    expect(beat.credential?.token).toMatch(/^jcr_/);
    expect(beat.credential!.token).not.toBe(claim!.credential.token);
    await rotated.stop();

    // B alone now starts: nothing is left under A, and the renewed credential works under B alone.
    const after = await start({ PLANTON_SECRET_KEY: B.toString("hex") });
    expect(await fetch(`${after.url}/api/health`).then((r) => r.status)).toBe(200);
    expect((await new RunnerClient(after.url, token).job(job.id, beat.credential!.token).heartbeat(claim!.attemptId)).signal).toBe("none");
    await expect(new RunnerClient(after.url, token, { attempts: 1, baseMs: 1, maxMs: 1 }).job(job.id, claim!.credential.token).heartbeat(claim!.attemptId)).rejects.toThrow(/job credential is not valid/);
  });
});
