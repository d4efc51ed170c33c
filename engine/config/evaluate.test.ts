import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { evaluate, references, type EvalScope } from "./evaluate";
import { parseExpression } from "./parser";
import { ConfigError } from "../errors";
import { isUnknown, UNKNOWN, type Value } from "../values";

const scope: EvalScope = {
  variable: (n) => ({ name: "web", n: 3, list: ["a", "b"], m: { k: "v" }, empty: "", nothing: null }[n] as Value),
  local: (n) => ({ greeting: "hi" }[n] as Value),
  resource: (type, name) =>
    type === "random_pet" && name === "p"
      ? { id: "proud-lion", length: 2 }
      : type === "random_id" && name === "many"
        ? [{ hex: "aa" }, { hex: "bb" }]
        : (UNKNOWN as unknown as Value),
  countIndex: 1,
};
const ev = (src: string) => evaluate(parseExpression(src, "t.tf"), scope);

describe("expressions", () => {
  it("literals, lists and objects", () => {
    expect(ev(`"text"`)).toBe("text");
    expect(ev(`42.5`)).toBe(42.5);
    expect(ev(`true`)).toBe(true);
    expect(ev(`null`)).toBe(null);
    expect(ev(`[1, "a", false]`)).toEqual([1, "a", false]);
    expect(ev(`{ a = 1, "b" = [2] }`)).toEqual({ a: 1, b: [2] });
    expect(ev(`"esc\\n\\"q\\" $\${x}"`)).toBe('esc\n"q" ${x}');
  });

  it("references to variables, locals, resources, indexes and splats", () => {
    expect(ev(`var.name`)).toBe("web");
    expect(ev(`local.greeting`)).toBe("hi");
    expect(ev(`random_pet.p.id`)).toBe("proud-lion");
    expect(ev(`var.list[1]`)).toBe("b");
    expect(ev(`var.m["k"]`)).toBe("v");
    expect(ev(`random_id.many[1].hex`)).toBe("bb");
    expect(ev(`random_id.many[*].hex`)).toEqual(["aa", "bb"]);
    expect(ev(`count.index`)).toBe(1);
    expect(isUnknown(ev(`random_id.later.hex`))).toBe(true);
  });

  it("interpolation: a lone interpolation keeps its type; otherwise text", () => {
    expect(ev(`"\${var.n}"`)).toBe(3);
    expect(ev(`"\${var.name}-\${var.n}"`)).toBe("web-3");
    expect(isUnknown(ev(`"x-\${random_id.later.hex}"`))).toBe(true);
  });

  it("arithmetic, comparison, logic and conditionals", () => {
    expect(ev(`1 + 2 * 3`)).toBe(7);
    expect(ev(`(1 + 2) * 3`)).toBe(9);
    expect(ev(`10 / 4`)).toBe(2.5);
    expect(ev(`10 % 4`)).toBe(2);
    expect(ev(`-var.n`)).toBe(-3);
    expect(ev(`var.n > 2 && var.n <= 3`)).toBe(true);
    expect(ev(`var.name == "web" || false`)).toBe(true);
    expect(ev(`!(var.n != 3)`)).toBe(true);
    expect(ev(`var.n >= 4 ? "big" : "small"`)).toBe("small");
    expect(ev(`[1, 2] == [1, 2]`)).toBe(true);
    expect(isUnknown(ev(`random_id.later.hex == "x" ? 1 : 2`))).toBe(true);
  });

  it("functions", () => {
    expect(ev(`upper("a")`)).toBe("A");
    expect(ev(`lower("A")`)).toBe("a");
    expect(ev(`join("-", ["a", "b"])`)).toBe("a-b");
    expect(ev(`format("%s has %d pages (%q)", "site", 2, "x")`)).toBe('site has 2 pages ("x")');
    expect(ev(`length("héllo")`)).toBe(5);
    expect(ev(`length([1, 2])`)).toBe(2);
    expect(ev(`length({ a = 1 })`)).toBe(1);
    expect(ev(`sha256("abc")`)).toBe(createHash("sha256").update("abc").digest("hex"));
    expect(ev(`md5("abc")`)).toBe(createHash("md5").update("abc").digest("hex"));
    expect(ev(`jsonencode({ a = [1, true] })`)).toBe('{"a":[1,true]}');
    expect(ev(`base64encode("hi")`)).toBe("aGk=");
    expect(ev(`concat([1], [2, 3])`)).toEqual([1, 2, 3]);
    expect(ev(`lookup(var.m, "k", "d")`)).toBe("v");
    expect(ev(`lookup(var.m, "zz", "d")`)).toBe("d");
    expect(ev(`coalesce(var.nothing, var.empty, "x")`)).toBe("x");
    expect(ev(`tostring(5)`)).toBe("5");
    expect(ev(`tonumber("5")`)).toBe(5);
    expect(ev(`replace("a-b-c", "-", "_")`)).toBe("a_b_c");
    expect(ev(`replace("a1b22", "/[0-9]+/", "#")`)).toBe("a#b#");
    expect(ev(`trimspace("  x \\n")`)).toBe("x");
    expect(ev(`substr("hello", 1, 3)`)).toBe("ell");
    expect(ev(`substr("hello", -3, -1)`)).toBe("llo");
    expect(isUnknown(ev(`upper(random_id.later.hex)`))).toBe(true);
  });

  it("errors name file:line and what is wrong", () => {
    expect(() => ev(`nope(1)`)).toThrow(/^t\.tf:1: Call to unknown function: there is no function named "nope"/);
    expect(() => ev(`upper("a", "b")`)).toThrow(/Too many function arguments: function "upper" expects only 1 argument\(s\)/);
    expect(() => ev(`var.list[5]`)).toThrow(/out of range/);
    expect(() => ev(`random_pet.p.nope`)).toThrow(/does not have an attribute named "nope"/);
    expect(() => ev(`1 + "x"`)).toThrow(ConfigError);
    expect(() => ev(`"a" ? 1 : 2`)).toThrow(/a bool is required/);
  });

  it("lists the references an expression makes", () => {
    const refs = references(parseExpression(`"\${var.a}-\${local.b}" == random_pet.p.id ? upper(random_id.x[0].hex) : count.index`));
    expect(refs.map((r) => r.addr)).toEqual(["var.a", "local.b", "random_pet.p", "random_id.x"]);
  });
});
