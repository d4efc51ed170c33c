import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { secrets } from "@/db/schema";
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
});
