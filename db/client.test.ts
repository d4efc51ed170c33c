import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { openDatabase } from "./client";
import { createTestDatabase, testDriver } from "../test/database";
import { organizations } from "./schema";

describe(`migrations (${testDriver})`, () => {
  it("are stamped in order: drizzle applies only those newer than the last applied, so an older stamp would be skipped on upgrade", () => {
    const journal = JSON.parse(readFileSync(new URL("./migrations/meta/_journal.json", import.meta.url), "utf8")) as { entries: { tag: string; when: number }[] };
    const out = journal.entries.filter((e, i) => i > 0 && e.when <= journal.entries[i - 1].when).map((e) => e.tag);
    expect(out, "migrations stamped no later than the one before them").toEqual([]);
  });

  it("apply from an empty PGlite database and create every table", async () => {
    const h = await openDatabase({ dataDir: "memory://" });
    const rows = await h.db.execute<{ table_name: string }>(sql`select table_name from information_schema.tables where table_schema = 'public'`);
    const names = (rows as unknown as { rows?: { table_name: string }[] }).rows ?? (rows as unknown as { table_name: string }[]);
    expect(names.map((r) => r.table_name)).toEqual(expect.arrayContaining(["organizations", "infra_components", "audit_events"]));
    await h.close();
  });

  it("apply from an empty Postgres database and are idempotent on restart", async () => {
    const t = await createTestDatabase();
    afterAll(() => t.close());
    await t.db.insert(organizations).values({ id: "org_1", slug: "x", name: "X" });
    if (t.url) {
      const again = await openDatabase({ url: t.url });
      expect((await again.db.select().from(organizations)).length).toBe(1);
      await again.close();
    }
  });
});
