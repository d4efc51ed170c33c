import { afterEach, describe, expect, it, vi } from "vitest";
import { decodeTime } from "ulid";
import { ID_PREFIXES, idKindOf, newId } from "./ids";

const sortedCopy = (ids: string[]) => [...ids].sort();

describe("ids", () => {
  afterEach(() => vi.restoreAllMocks());

  it("ids made in one millisecond still sort in the order they were made", () => {
    vi.spyOn(Date, "now").mockReturnValue(Date.UTC(2026, 11, 1, 9));
    const ids = Array.from({ length: 10_000 }, () => newId("infraJob"));
    expect(new Set(ids).size).toBe(ids.length);
    expect(sortedCopy(ids)).toEqual(ids);
  });

  it("ids made after the clock steps back still sort after the earlier ones", () => {
    const now = Date.UTC(2026, 11, 1, 10);
    const clock = vi.spyOn(Date, "now").mockReturnValue(now);
    const before = newId("auditEvent");
    clock.mockReturnValue(now - 5);
    const after = newId("auditEvent");
    expect(after > before).toBe(true);
  });

  it("carry the kind's prefix and the creation time", () => {
    const now = Date.UTC(2027, 0, 2, 3, 4, 5);
    vi.spyOn(Date, "now").mockReturnValue(now);
    const id = newId("runner");
    expect(id).toMatch(/^rnr_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(decodeTime(id.slice("rnr_".length))).toBe(now);
    for (const kind of Object.keys(ID_PREFIXES) as (keyof typeof ID_PREFIXES)[]) expect(idKindOf(newId(kind))).toBe(kind);
  });
});
