import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { appRouter } from "./root";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { seedTestOrg, type TestOrg } from "../../test/fixtures";
import { ROLES, roleAllows, type Role } from "@/lib/roles";

type AnyProcedure = { _def: { type: "query" | "mutation" | "subscription"; meta?: { requires?: Role } } };
const procedures = Object.entries((appRouter as unknown as { _def: { procedures: Record<string, AnyProcedure> } })._def.procedures);

let t: TestDatabase;
let org: TestOrg;

beforeAll(async () => {
  t = await createTestDatabase();
  org = await seedTestOrg(t.db);
});
afterAll(() => t.close());

async function invoke(role: Role | null, path: string, input: Record<string, unknown>): Promise<unknown> {
  const caller = org.call(role) as unknown as Record<string, unknown>;
  const fn = path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], caller) as (i: unknown) => Promise<unknown>;
  try {
    const r = await fn(input);
    // A subscription returns an iterable; its checks ran already.
    if (r && typeof (r as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") {
      await (r as AsyncIterator<unknown> & { return?: () => unknown }).return?.();
    }
    return r;
  } catch (e) {
    return e;
  }
}

describe("permissions", () => {
  it("every organization procedure declares the role it needs, and no mutation is open to viewers", () => {
    expect(procedures.length).toBeGreaterThan(10);
    for (const [path, p] of procedures) {
      if (path.startsWith("me.")) continue;
      expect(p._def.meta?.requires, `${path} declares a role`).toBeDefined();
      if (p._def.type === "mutation") expect(p._def.meta?.requires, `${path} is a mutation`).not.toBe("viewer");
    }
  });

  it("a caller who is not signed in is refused by every procedure", async () => {
    for (const [path] of procedures) {
      const r = await invoke(null, path, { org: org.slug });
      expect(r, path).toBeInstanceOf(TRPCError);
      expect((r as TRPCError).code, path).toBe("UNAUTHORIZED");
    }
  });

  for (const role of ROLES) {
    it(`a ${role} is let through exactly the procedures their role allows, and told which role is needed otherwise`, async () => {
      for (const [path, p] of procedures) {
        const need = p._def.meta?.requires;
        if (!need) continue;
        const r = await invoke(role, path, { org: org.slug });
        const refused = r instanceof TRPCError && r.code === "FORBIDDEN";
        expect(refused, `${role} calling ${path} (needs ${need})`).toBe(!roleAllows(role, need));
        if (refused) {
          expect((r as TRPCError).message).toContain(`this needs the ${need} role`);
          expect((r as TRPCError).message).toContain(`Nothing was changed`);
        }
      }
    });
  }

  it("a member of another organization cannot see this one", async () => {
    const other = await seedTestOrg(t.db);
    const r = await other.call("admin").components.list({ org: org.slug }).catch((e) => e);
    expect(r).toBeInstanceOf(TRPCError);
    expect((r as TRPCError).code).toBe("NOT_FOUND");
  });
});
