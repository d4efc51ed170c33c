// The audit export on both drivers: CSV with the shared columns, quoted and guarded against formulas,
// or one JSON array; the filter selects the same events as the list; bad queries are refused in words.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { seedTestOrg, type TestOrg } from "../../../test/fixtures";
import { AUDIT_CSV_COLUMNS } from "@/lib/api/audit-schemas";
import { recordAudit } from "../../audit";
import { PlantonError } from "../../errors";
import { auditExportChunks, parseExportQuery } from "./export";
import { listAudit } from "./list";

let t: TestDatabase;
let org: TestOrg;

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
  await recordAudit(t.db, org.actor(), { action: "connection.create", targetName: "aws-prod", summary: `=HYPERLINK("http://evil.example") created, "quoted", on two\nlines`, changes: { region: { from: null, to: "eu-west-1" } } });
  await recordAudit(t.db, org.actor("engineer"), { action: "job.cancel", targetName: "site", environment: "prod", summary: "-cancelled" });
  await recordAudit(t.db, org.actor(), { action: "connection.delete", targetName: "aws-prod", summary: "@deleted" });
});
afterAll(() => t.close());

const exported = async (query: string, batch = 2) => {
  const q = parseExportQuery(new URLSearchParams(query));
  let text = "";
  for await (const chunk of auditExportChunks(t.db, org.actor("viewer"), org.slug, q.filter, q.format, batch)) text += chunk;
  return text;
};

/** A minimal RFC 4180 reader, to read back what the export wrote. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") row.push(cell), (cell = "");
    else if (ch === "\r" && text[i + 1] === "\n") row.push(cell), rows.push(row), (row = []), (cell = ""), i++;
    else cell += ch;
  }
  return rows;
}

describe("audit export", () => {
  it("writes CSV with the shared columns, oldest first, quoting and guarding every cell", async () => {
    const rows = parseCsv(await exported("format=csv&action=connection"));
    expect(rows[0]).toEqual([...AUDIT_CSV_COLUMNS]);
    const col = (name: (typeof AUDIT_CSV_COLUMNS)[number]) => AUDIT_CSV_COLUMNS.indexOf(name);
    expect(rows.slice(1).map((r) => r[col("summary")])).toEqual([`'=HYPERLINK("http://evil.example") created, "quoted", on two\nlines`, "'@deleted"]);
    expect(JSON.parse(rows[1][col("changes")])).toEqual({ region: { from: null, to: "eu-west-1" } });
    expect(Number(rows[2][col("seq")])).toBeGreaterThan(Number(rows[1][col("seq")]));
  });

  it("writes one JSON array of the events the list shows for the same filter, across batches", async () => {
    const all = JSON.parse(await exported("format=json", 2));
    const listed = await listAudit(t.db, org.actor("viewer"), org.slug, { limit: 200 });
    expect(all).toEqual(JSON.parse(JSON.stringify(listed.events)).reverse());
    expect(JSON.parse(await exported("format=json&environment=prod&result=success")).map((e: { summary: string }) => e.summary)).toEqual(["-cancelled"]);
    expect(JSON.parse(await exported("format=json&environment=nowhere"))).toEqual([]);
    expect(JSON.parse(await exported("format=json&component=cmp_nowhere"))).toEqual([]);
  });

  it("refuses a bad format, an unknown parameter and a bad filter in words", async () => {
    const refusal = (q: string) => {
      try {
        parseExportQuery(new URLSearchParams(q));
        return "accepted";
      } catch (e) {
        expect(e).toBeInstanceOf(PlantonError);
        return (e as PlantonError).message;
      }
    };
    expect(refusal("format=xml")).toBe("Nothing was exported: format xml is not one the export writes. Use format=csv or format=json.");
    expect(refusal("actr=ann")).toMatch(/^Nothing was exported: actr is not a filter of the audit record\. Use actor, action, /);
    expect(refusal("from=yesterday")).toBe("Nothing was exported: from: Give a time as ISO 8601, for example 2026-11-24T00:00:00Z");
    expect(refusal("org=acme%00")).toMatch(/^The org cannot be stored: it contains a NUL byte/);
    expect(refusal("actor=ann%00")).toMatch(/^The actor cannot be stored: it contains a NUL byte/);
    expect(refusal("action=job.nothing")).toMatch(/^Nothing was exported: action: Action must be one the record keeps/);
  });
});
