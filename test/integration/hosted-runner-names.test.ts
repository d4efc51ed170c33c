// Two console replicas started alike — PLANTON_HOSTED_RUNNERS=1 on each, one Postgres — as an operator
// scales out with one command line for every replica: each runs a hosted runner of its own name (hosted-1,
// hosted-2), neither rotates the other's token, and a replica started again takes back the lowest free
// name while the other's runner goes on working with the token it was given.
import { asc, isNull } from "drizzle-orm";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { runners } from "../../db/schema";
import { HOSTED_RUNNER_NICE } from "../../server/config";
import { startConsoleServer, type ConsoleServer } from "../console-server";
import { createTestDatabase, type TestDatabase } from "../database";

const env = { PLANTON_SECRET_KEY: "4c".repeat(32), PLANTON_RUNNER_HEARTBEAT_MS: "1000" };

let t: TestDatabase;
let a: ConsoleServer;
let b: ConsoleServer;

const hosted = async () =>
  t.db.select({ name: runners.name, tokenHash: runners.tokenHash, lastSeenAt: runners.lastSeenAt }).from(runners).where(isNull(runners.orgId)).orderBy(asc(runners.name));

/** Resolves once every hosted runner has claimed (so its token was accepted) after `since`. */
const allClaimedSince = (since: Date, names: string[]) =>
  vi.waitFor(
    async () => {
      const rows = await hosted();
      expect(rows.map((r) => r.name)).toEqual(names);
      for (const r of rows) if (!r.lastSeenAt || r.lastSeenAt < since) throw new Error(`${r.name} has not claimed since ${since.toISOString()}`);
      return rows;
    },
    { timeout: 30_000, interval: 200 },
  );

beforeAll(async () => {
  t = await createTestDatabase();
  a = await startConsoleServer({ databaseUrl: t.url!, hostedRunners: 1, env });
  await a.waitForOutput(/started 1 hosted runner\(s\) \(hosted-1\)/, "replica A started hosted-1");
  b = await startConsoleServer({ databaseUrl: t.url!, hostedRunners: 1, env });
  await b.waitForOutput(/started 1 hosted runner\(s\) \(hosted-2\)/, "replica B started hosted-2");
});

afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await t?.close();
});

it("replicas started alike run hosted runners of distinct names, each working with its own token", async () => {
  const bothUp = new Date();
  const rows = await allClaimedSince(bothUp, ["hosted-1", "hosted-2"]);
  expect(new Set(rows.map((r) => r.tokenHash)).size).toBe(2);
  // Neither runner was refused and restarted: a rotated token would have shown as an exit in its console's log.
  for (const server of [a, b]) expect(server.output()).not.toMatch(/hosted-\d+ exited/);
  // Each runs at the hosted runners' CPU priority (PLANTON_HOSTED_RUNNER_NICE, 10 unless set): the console comes first.
  for (const server of [a, b]) {
    const started = server.output().split("\n").filter((l) => l.includes('"msg":"runner started"')).map((l) => JSON.parse(l.slice(l.indexOf("{"))) as { nice?: number });
    expect(started.map((l) => l.nice)).toEqual([HOSTED_RUNNER_NICE]);
  }
});

it("a replica started again takes back the lowest free name; the other replica's runner keeps its token and goes on claiming", async () => {
  const [, before2] = await hosted();
  const from = a.output().length;
  await a.restart();
  await vi.waitFor(() => expect(a.output().slice(from)).toMatch(/started 1 hosted runner\(s\) \(hosted-1\)/), { timeout: 30_000, interval: 100 });
  const restarted = new Date();
  const rows = await allClaimedSince(restarted, ["hosted-1", "hosted-2"]);
  expect(rows[1].tokenHash).toBe(before2.tokenHash);
  expect(b.output()).not.toMatch(/hosted-\d+ exited/);
});
