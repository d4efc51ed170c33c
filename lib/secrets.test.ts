import { describe, expect, it } from "vitest";
import { generatedSecretName, secretReferences, STORE_NAME, unstorableText } from "./secrets";

// Names as the services allow them: environments and components lower-case with dashes, outputs HCL identifiers.
const environments = ["prod", "a", "a-b", "a--b", "a-", "a-x", "ax", "a-b-"];
const components = ["orders-db", "orders", "db", "b-c", "b--c", "c-", "x-c", "b-x"];
const outputs = ["password", "Password", "db_password", "db-password", "_p", "p_", "u", "uA", "A", "d", "x"];

describe("generated secret names", () => {
  it("read like PROD__ORDERS_DB__PASSWORD", () => {
    expect(generatedSecretName("prod", "orders-db", "password")).toBe("PROD__ORDERS_DB__PASSWORD");
  });

  it("obey the store's name rule, and two distinct (environment, component, output) never share one", () => {
    const seen = new Map<string, string>();
    for (const e of environments)
      for (const c of components)
        for (const o of outputs) {
          const name = generatedSecretName(e, c, o);
          expect(name).toMatch(STORE_NAME);
          const triple = `${e} ${c} ${o}`;
          expect(seen.get(name) ?? triple, name).toBe(triple);
          seen.set(name, triple);
        }
    expect(seen.size).toBe(environments.length * components.length * outputs.length);
  });
});

describe("secret references", () => {
  it("are whole `$secret/NAME` values anywhere in a spec, each once", () => {
    expect(secretReferences({ a: "$secret/DB_PASSWORD", b: ["x", "$secret/TOKEN"], c: { d: "$secret/DB_PASSWORD" }, e: "not $secret/INLINE" })).toEqual(["DB_PASSWORD", "TOKEN"]);
  });
});

describe("unstorable text", () => {
  it("names a NUL byte and an unpaired surrogate; a paired one is fine", () => {
    expect(unstorableText("a\u0000b")).toContain("NUL");
    expect(unstorableText("a\ud800b")).toContain("surrogate");
    expect(unstorableText("a\udc00")).toContain("surrogate");
    expect(unstorableText("key \u{1F511}")).toBeNull();
  });
});
