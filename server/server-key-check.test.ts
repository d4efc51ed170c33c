import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { secrets, serverKeyCheck } from "@/db/schema";
import { newId } from "@/lib/ids";
import { createTestDatabase, type TestDatabase } from "../test/database";
import { seedTestOrg } from "../test/fixtures";
import { encryptSecret } from "./crypto";
import { serverKeyMismatch } from "./server-key-check";

process.env.PLANTON_SECRET_KEY ??= "0f".repeat(32);

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

describe("a console's server key against the database", () => {
  it("opens what its own key sealed, and names the fix when another key sealed the newest secret", async () => {
    const org = await seedTestOrg(t.db);
    expect(await serverKeyMismatch(t.db)).toBeNull(); // nothing sealed yet
    const seal = async (name: string, value: string) => t.db.insert(secrets).values({ id: newId("secret"), orgId: org.orgId, name, valueEncrypted: value });
    await seal("OURS", encryptSecret("v"));
    expect(await serverKeyMismatch(t.db)).toBeNull();
    await seal("THEIRS", encryptSecret("v", randomBytes(32)));
    const problem = await serverKeyMismatch(t.db);
    expect(problem).toMatch(/^The console did not start: its server key does not decrypt what is already in the database \(secret THEIRS\)/);
    expect(problem).toContain("set PLANTON_SECRET_KEY to the key the other replicas use");
  });

  it("on an empty database, the first console's key is the one every other console must have, also when two start at once", async () => {
    const [a, b, c] = [randomBytes(32), randomBytes(32), randomBytes(32)];
    const fresh = await createTestDatabase();
    try {
      // Nothing sealed yet: the first key in writes the database's key check; another key is refused, naming it.
      expect(await serverKeyMismatch(fresh.db, a)).toBeNull();
      const problem = await serverKeyMismatch(fresh.db, b);
      expect(problem).toMatch(/^The console did not start: its server key does not decrypt what is already in the database \(the key check that the first console started on it wrote\)/);
      expect(problem).toContain("set PLANTON_SECRET_KEY to the key the other replicas use");
      expect(await serverKeyMismatch(fresh.db, a)).toBeNull();
      expect((await fresh.db.select().from(serverKeyCheck)).length).toBe(1);
    } finally {
      await fresh.close();
    }
    // Two consoles with different keys starting at the same moment on an empty database: one starts, the other is refused.
    const raced = await createTestDatabase();
    try {
      const answers = await Promise.all([serverKeyMismatch(raced.db, b), serverKeyMismatch(raced.db, c)]);
      expect(answers.filter((x) => x === null)).toHaveLength(1);
      expect(answers.find((x) => x !== null)).toMatch(/\(the key check that the first console started on it wrote\)/);
    } finally {
      await raced.close();
    }
  });
});
