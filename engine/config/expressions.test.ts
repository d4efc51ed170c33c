import { describe, expect, it } from "vitest";
import { evaluate, evaluateMarked, references, type EvalScope } from "./evaluate";
import { parseExpression, parseFile } from "./parser";
import { isUnknown, UNKNOWN, type Value } from "../values";

const vars: Record<string, Value> = {
  xs: ["a", "b", "c"],
  nums: [3, 1, 2],
  m: { b: 2, a: 1, c: 3 },
  users: [
    { name: "ann", role: "admin", tags: { team: "x" } },
    { name: "bob", role: "dev", tags: { team: "y" } },
    { name: "cy", role: "admin", tags: { team: "x" } },
  ],
  one: { name: "solo" },
  nothing: null,
  secret: "hunter22",
};
const scope: EvalScope = {
  variable: (n) => vars[n] ?? null,
  local: () => null,
  resource: () => UNKNOWN as unknown as Value,
  marks: (addr) => addr === "var.secret",
};
const ev = (src: string) => evaluate(parseExpression(src, "t.tf"), scope);

describe("for expressions", () => {
  it("build lists from lists, with the index when asked", () => {
    expect(ev(`[for x in var.xs : upper(x)]`)).toEqual(["A", "B", "C"]);
    expect(ev(`[for i, x in var.xs : "\${i}:\${x}"]`)).toEqual(["0:a", "1:b", "2:c"]);
    expect(ev(`[for x in var.nums : x * 2 if x > 1]`)).toEqual([6, 4]);
  });

  it("iterate maps and objects by key in lexical order", () => {
    expect(ev(`[for k, v in var.m : "\${k}=\${v}"]`)).toEqual(["a=1", "b=2", "c=3"]);
    expect(ev(`[for v in var.m : v]`)).toEqual([1, 2, 3]);
    expect(ev(`{for k, v in var.m : upper(k) => v + 10 if v != 2}`)).toEqual({ A: 11, C: 13 });
  });

  it("build objects, and group values by key with ...", () => {
    expect(ev(`{for u in var.users : u.name => u.role}`)).toEqual({ ann: "admin", bob: "dev", cy: "admin" });
    expect(ev(`{for u in var.users : u.role => u.name...}`)).toEqual({ admin: ["ann", "cy"], dev: ["bob"] });
    expect(() => ev(`{for u in var.users : u.role => u.name}`)).toThrow(/^t\.tf:1: Duplicate object key: two different items produced the key "admin"/);
  });

  it("read across lines inside brackets and braces, and nest", () => {
    const e = parseExpression(`{\n  for u in var.users :\n  u.name => [for k, v in u.tags : "\${k}/\${v}"]\n  if u.role == "admin"\n}`, "t.tf");
    expect(evaluate(e, scope)).toEqual({ ann: ["team/x"], cy: ["team/x"] });
  });

  it("refuse what OpenTofu refuses", () => {
    expect(() => ev(`[for x in var.nothing : x]`)).toThrow(/Iteration over null value/);
    expect(() => ev(`[for x in "abc" : x]`)).toThrow(/Iteration over non-iterable value: a value of type string/);
    expect(() => ev(`[for x in var.xs : x if "yes"]`)).toThrow(/Invalid 'for' condition/);
    expect(() => parseExpression(`[for x in var.xs : x => x]`)).toThrow(/only valid in an object for expression/);
  });

  it("are unknown when their collection is", () => {
    expect(isUnknown(ev(`[for x in random_id.r.list : x]`))).toBe(true);
    expect(isUnknown(ev(`"%{ for x in var.xs }\${random_id.r.hex}%{ endfor }"`))).toBe(true);
  });

  it("an object key named for is still a key", () => {
    expect(ev(`{ for = 1 }`)).toEqual({ for: 1 });
  });

  it("their iterator names are not references", () => {
    expect(references(parseExpression(`[for k, x in var.xs : "\${k}\${x.a}\${local.y}"]`)).map((r) => r.addr)).toEqual(["var.xs", "local.y"]);
  });
});

describe("splats", () => {
  it("[*] applies the rest of the traversal to each element", () => {
    expect(ev(`var.users[*].name`)).toEqual(["ann", "bob", "cy"]);
    expect(ev(`var.users[*].tags.team`)).toEqual(["x", "y", "x"]);
    expect(ev(`var.users[*].tags["team"]`)).toEqual(["x", "y", "x"]);
  });

  it("the legacy .* applies only attribute steps; a later index picks from the result", () => {
    expect(ev(`var.users.*.name`)).toEqual(["ann", "bob", "cy"]);
    expect(ev(`var.users.*.name[1]`)).toBe("bob");
    expect(ev(`[{ a = [1, 2] }, { a = [3, 4] }][*].a[0]`)).toEqual([1, 3]);
    expect(ev(`[{ a = [1, 2] }, { a = [3, 4] }].*.a[0]`)).toEqual([1, 2]);
  });

  it("a single value becomes a one-element list; null an empty list", () => {
    expect(ev(`var.one[*].name`)).toEqual(["solo"]);
    expect(ev(`var.nothing[*].name`)).toEqual([]);
    expect(ev(`length(var.nothing[*])`)).toBe(0);
  });
});

describe("function argument expansion", () => {
  it("spreads the last argument", () => {
    expect(ev(`max(var.nums...)`)).toBe(3);
    expect(ev(`format("%s-%s", ["a", "b"]...)`)).toBe("a-b");
    expect(ev(`concat(["z"], [var.xs, var.xs]...)`)).toEqual(["z", "a", "b", "c", "a", "b", "c"]);
    expect(() => ev(`max(var.nothing...)`)).toThrow(/Invalid expanding argument value: the expanding argument \(indicated by \.\.\.\) cannot be null/);
    expect(() => parseExpression(`max(var.nums..., 1)`)).toThrow(/must be the last argument/);
  });
});

describe("template directives", () => {
  it("if / else / endif", () => {
    expect(ev(`"%{ if length(var.xs) > 2 }many%{ else }few%{ endif }"`)).toBe("many");
    expect(ev(`"a%{ if false }b%{ endif }c"`)).toBe("ac");
  });

  it("for / endfor, with the index", () => {
    expect(ev(`"%{ for i, x in var.xs }\${i}\${x};%{ endfor }"`)).toBe("0a;1b;2c;");
  });

  it("strip markers trim whitespace and newlines beside them", () => {
    const body = parseFile(`locals {\n  t = <<-EOT\n    %{~ for x in var.xs ~}\n    - \${x}\n    %{~ endfor ~}\n  EOT\n  u = "a  \${~ "b" ~}  c"\n}\n`, "h.tf");
    const get = (n: string) => evaluate(body.blocks[0]!.body.attributes.find((a) => a.name === n)!.expr, scope);
    expect(get("t")).toBe("- a- b- c");
    expect(get("u")).toBe("abc");
  });

  it("heredoc templates keep their lines", () => {
    const body = parseFile(`locals {\n  t = <<EOT\n%{ for x in var.xs }\${x}\n%{ endfor }done\nEOT\n}\n`, "h.tf");
    expect(evaluate(body.blocks[0]!.body.attributes[0]!.expr, scope)).toBe("a\nb\nc\ndone\n");
  });

  it("a template with a directive is always a string", () => {
    expect(ev(`"%{ if true }\${3}%{ endif }"`)).toBe("3");
    expect(ev(`"\${3}"`)).toBe(3);
  });

  it("an escaped %%{ is text", () => {
    expect(ev(`"%%{ if }"`)).toBe("%{ if }");
    expect(parseExpression(`"a$\${b} %%{c}"`)).toMatchObject({ kind: "literal", value: "a${b} %{c}" });
  });

  it("unbalanced directives name the line", () => {
    expect(() => parseExpression(`"%{ endif }"`, "t.tf")).toThrow(/^t\.tf:1: Unexpected template directive: %\{ endif \} has no matching %\{ if \}/);
    expect(() => parseExpression(`"%{ for x in y }z"`, "t.tf")).toThrow(/has no %\{ endfor \}/);
    expect(() => parseExpression(`"%{ while }"`, "t.tf")).toThrow(/Invalid template directive/);
  });
});

describe("sensitivity", () => {
  const mark = (src: string) => evaluateMarked(parseExpression(src, "t.tf"), scope).marks;
  it("follows a sensitive value through expressions, and only there", () => {
    expect(mark(`var.secret`)).toBe(true);
    expect(mark(`"pw: \${var.secret}"`)).toBe(true);
    expect(mark(`upper(var.secret)`)).toBe(true);
    expect(mark(`{ a = var.secret, b = "x" }`)).toEqual({ a: true, b: false });
    expect(mark(`{ a = var.secret, b = "x" }.b`)).toBe(false);
    expect(mark(`[for x in var.xs : x]`)).toBe(false);
    expect(mark(`var.xs`)).toBe(false);
  });

  it("sensitive() marks, nonsensitive() unmarks, issensitive() tells", () => {
    expect(mark(`sensitive("x")`)).toBe(true);
    expect(mark(`nonsensitive(sha256(var.secret))`)).toBe(false);
    expect(ev(`issensitive(var.secret)`)).toBe(true);
    expect(ev(`issensitive(var.xs)`)).toBe(false);
  });
});
