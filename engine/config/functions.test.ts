import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { evaluate, type EvalScope } from "./evaluate";
import { parseExpression } from "./parser";
import { isUnknown, UNKNOWN, type Value } from "../values";

const scope: EvalScope = {
  variable: (n) => ({ list: ["b", "a", "b"], m: { k: "v" }, nothing: null } as Record<string, Value>)[n] ?? null,
  local: () => null,
  resource: () => UNKNOWN as unknown as Value,
  files: {
    "main.tf": "",
    "hello.txt": "hello\n",
    "templates/greeting.tpl": "Hi ${name}!%{ for t in tags } #${t}%{ endfor }",
    "templates/nested.tpl": '${templatefile("templates/greeting.tpl", {})}',
    "templates/users.yaml": "users:\n  - ann\n  - bob\n",
  },
};
const ev = (src: string) => evaluate(parseExpression(src, "f.tf"), scope);

describe("string functions", () => {
  it("format, formatlist, join, split", () => {
    expect(ev(`format("%s=%d (%05.1f) %q %t %v %%", "a", 7, 3.14159, "q", true, 2)`)).toBe('a=7 (003.1) "q" true 2 %');
    expect(ev(`format("%-4s|%4s|%x|%X", "ab", "cd", 255, 255)`)).toBe("ab  |  cd|ff|FF");
    expect(ev(`formatlist("%s-%s", ["a", "b"], "x")`)).toEqual(["a-x", "b-x"]);
    expect(ev(`join(", ", ["a"], ["b", "c"])`)).toBe("a, b, c");
    expect(ev(`split(",", "a,b,,c")`)).toEqual(["a", "b", "", "c"]);
    expect(() => ev(`format("%s %s", "a")`)).toThrow(/^f\.tf:1: Error in function call: Call to function "format" failed: not enough arguments/);
  });

  it("case, trimming and testing", () => {
    expect(ev(`title("hello big world")`)).toBe("Hello Big World");
    expect(ev(`trim("?!hello?!", "!?")`)).toBe("hello");
    expect(ev(`trimprefix("helloworld", "hello")`)).toBe("world");
    expect(ev(`trimsuffix("helloworld", "world")`)).toBe("hello");
    expect(ev(`chomp("hello\\n\\r\\n")`)).toBe("hello");
    expect(ev(`indent(2, "a\\nb\\n")`)).toBe("a\n  b\n  ");
    expect(ev(`startswith("hello", "he")`)).toBe(true);
    expect(ev(`endswith("hello", "lo")`)).toBe(true);
    expect(ev(`strcontains("hello", "ell")`)).toBe(true);
  });

  it("replace, substr and regular expressions (RE2 syntax)", () => {
    expect(ev(`replace("1 + 2 + 3", "+", "-")`)).toBe("1 - 2 - 3");
    expect(ev(`replace("hello world", "/w(or)ld/", "$1 $\${1}")`)).toBe("hello or or");
    expect(ev(`substr("hello world", -5, 3)`)).toBe("wor");
    expect(ev(`regex("[a-z]+", "53453453.345345aaabbbccc23454")`)).toBe("aaabbbccc");
    expect(ev(`regex("(\\\\d\\\\d\\\\d\\\\d)-(\\\\d\\\\d)", "2019-02-01")`)).toEqual(["2019", "02"]);
    expect(ev(`regex("^(?P<user>[^@]+)@(?P<domain>.+)$", "ann@example.com")`)).toEqual({ user: "ann", domain: "example.com" });
    expect(ev(`regexall("[a-z]+", "1a2bb3")`)).toEqual(["a", "bb"]);
    expect(ev(`length(regexall("z", "abc")) > 0`)).toBe(false);
    expect(ev(`regex("(?i)ABC", "xabcx")`)).toBe("abc");
    expect(() => ev(`regex("z", "abc")`)).toThrow(/Call to function "regex" failed: pattern did not match any part of the given string/);
  });
});

describe("collection functions", () => {
  it("lists", () => {
    expect(ev(`length(var.list)`)).toBe(3);
    expect(ev(`concat([1], [2, 3])`)).toEqual([1, 2, 3]);
    expect(ev(`contains(var.list, "a")`)).toBe(true);
    expect(ev(`distinct(var.list)`)).toEqual(["b", "a"]);
    expect(ev(`element(["a", "b"], 3)`)).toBe("b");
    expect(ev(`flatten([[1, [2]], [], 3])`)).toEqual([1, 2, 3]);
    expect(ev(`reverse([1, 2, 3])`)).toEqual([3, 2, 1]);
    expect(ev(`slice(["a", "b", "c", "d"], 1, 3)`)).toEqual(["b", "c"]);
    expect(ev(`sort(["b", "a", "10", "9"])`)).toEqual(["10", "9", "a", "b"]);
    expect(ev(`index(["a", "b"], "b")`)).toBe(1);
    expect(ev(`compact(["a", "", null, "b"])`)).toEqual(["a", "b"]);
    expect(ev(`one([])`)).toBe(null);
    expect(ev(`one(["x"])`)).toBe("x");
    expect(ev(`range(3)`)).toEqual([0, 1, 2]);
    expect(ev(`range(1, 8, 3)`)).toEqual([1, 4, 7]);
    expect(ev(`range(3, 0)`)).toEqual([3, 2, 1]);
    expect(ev(`coalescelist([], ["a"])`)).toEqual(["a"]);
    expect(ev(`alltrue([true, "true"])`)).toBe(true);
    expect(ev(`anytrue([false])`)).toBe(false);
    expect(ev(`sum([1, 2.5])`)).toBe(3.5);
    expect(ev(`min(3, 1, 2)`)).toBe(1);
    expect(ev(`max(3, 1, 2)`)).toBe(3);
    expect(() => ev(`one(["a", "b"])`)).toThrow(/Invalid function argument: Invalid value for "list" parameter: must be a list, set, or tuple value with either zero or one elements/);
    expect(() => ev(`index(["a"], "z")`)).toThrow(/item not found/);
    expect(() => ev(`slice(["a"], 0, 2)`)).toThrow(/end index must not be greater than the length of the list/);
    expect(() => ev(`sum([])`)).toThrow(/cannot sum an empty list/);
  });

  it("maps", () => {
    expect(ev(`keys({ b = 1, a = 2 })`)).toEqual(["a", "b"]);
    expect(ev(`values({ b = 1, a = 2 })`)).toEqual([2, 1]);
    expect(ev(`lookup(var.m, "zz", "d")`)).toBe("d");
    expect(ev(`merge({ a = 1, b = 1 }, null, { b = 2 })`)).toEqual({ a: 1, b: 2 });
    expect(ev(`zipmap(["a", "b"], [1, 2])`)).toEqual({ a: 1, b: 2 });
    expect(() => ev(`lookup(var.m, "zz")`)).toThrow(/Call to function "lookup" failed: lookup failed to find key "zz"/);
    expect(() => ev(`zipmap(["a"], [])`)).toThrow(/number of keys \(1\) does not match number of values \(0\)/);
  });

  it("sets: ordered as OpenTofu orders them, without duplicates", () => {
    expect(ev(`toset(["b", "a", "b"])`)).toEqual(["a", "b"]);
    expect(ev(`setunion(["a", "b"], ["b", "c"])`)).toEqual(["a", "b", "c"]);
    expect(ev(`setintersection(["a", "b"], ["b", "c"])`)).toEqual(["b"]);
    expect(ev(`setsubtract(["a", "b"], ["b"])`)).toEqual(["a"]);
    expect(ev(`setproduct(["a", "b"], [1, 2])`)).toEqual([["a", 1], ["a", 2], ["b", 1], ["b", 2]]);
    expect(ev(`[for x in toset(["z", "y"]) : x]`)).toEqual(["y", "z"]);
  });

  it("conversions between lists, sets and maps", () => {
    expect(ev(`tolist(["a", 1, true])`)).toEqual(["a", "1", "true"]);
    expect(ev(`tomap({ a = 1, b = "x" })`)).toEqual({ a: "1", b: "x" });
    expect(() => ev(`tomap(["a"])`)).toThrow(/Invalid value for "v" parameter: cannot convert tuple to map of any single type/);
    expect(() => ev(`tolist([{ a = 1 }, "b"])`)).toThrow(/cannot convert tuple to list of any single type/);
  });
});

describe("encoding functions", () => {
  it("json and yaml", () => {
    expect(ev(`jsonencode({ b = [1, true, null], a = "<x>" })`)).toBe('{"a":"\\u003cx\\u003e","b":[1,true,null]}');
    expect(ev(`jsondecode("{\\"a\\": [1, 2]}")`)).toEqual({ a: [1, 2] });
    expect(ev(`yamlencode({ b = "x", a = [1, 2] })`)).toBe('"a":\n- 1\n- 2\n"b": "x"\n');
    expect(ev(`yamldecode("a: [1, 2]\\nb: x\\n")`)).toEqual({ a: [1, 2], b: "x" });
    expect(() => ev(`jsondecode("{")`)).toThrow(/^f\.tf:1: Invalid function argument: Invalid value for "str" parameter/);
  });

  it("base64, url and csv", () => {
    expect(ev(`base64encode("hello")`)).toBe("aGVsbG8=");
    expect(ev(`base64decode("aGVsbG8=")`)).toBe("hello");
    expect(ev(`urlencode("a b&c/é")`)).toBe("a+b%26c%2F%C3%A9");
    expect(ev(`csvdecode("a,b\\n1,\\"x,y\\"\\n")`)).toEqual([{ a: "1", b: "x,y" }]);
    expect(() => ev(`base64decode("!!")`)).toThrow(/failed to decode base64 data/);
  });

  it("hashes", () => {
    const h = (algo: string, enc: "hex" | "base64") => createHash(algo).update("abc").digest(enc);
    expect(ev(`md5("abc")`)).toBe(h("md5", "hex"));
    expect(ev(`sha1("abc")`)).toBe(h("sha1", "hex"));
    expect(ev(`sha256("abc")`)).toBe(h("sha256", "hex"));
    expect(ev(`sha512("abc")`)).toBe(h("sha512", "hex"));
    expect(ev(`base64sha256("abc")`)).toBe(h("sha256", "base64"));
    expect(ev(`base64sha512("abc")`)).toBe(h("sha512", "base64"));
    expect(() => ev(`uuid()`)).toThrow(/uuid is refused by the builtin engine: it returns a different value on every run/);
  });
});

describe("filesystem functions read only the module's own files", () => {
  it("file, fileexists, fileset, filebase64, templatefile", () => {
    expect(ev(`file("\${path.module}/hello.txt")`)).toBe("hello\n");
    expect(ev(`fileexists("hello.txt")`)).toBe(true);
    expect(ev(`fileexists("nope.txt")`)).toBe(false);
    expect(ev(`fileset(path.module, "templates/*.tpl")`)).toEqual(["templates/greeting.tpl", "templates/nested.tpl"]);
    expect(ev(`fileset("templates", "**")`)).toEqual(["greeting.tpl", "nested.tpl", "users.yaml"]);
    expect(ev(`filebase64("hello.txt")`)).toBe(Buffer.from("hello\n").toString("base64"));
    expect(ev(`filesha256("hello.txt")`)).toBe(createHash("sha256").update("hello\n").digest("hex"));
    expect(ev(`templatefile("templates/greeting.tpl", { name = "Ann", tags = ["a", "b"] })`)).toBe("Hi Ann! #a #b");
    expect(ev(`yamldecode(file("templates/users.yaml")).users`)).toEqual(["ann", "bob"]);
    expect(ev(`basename("a/b/c.txt")`)).toBe("c.txt");
    expect(ev(`dirname("a/b/c.txt")`)).toBe("a/b");
  });

  it("a path outside the module, or a missing file, is an error naming the path", () => {
    expect(() => ev(`file("../secrets.txt")`)).toThrow(/Invalid value for "path" parameter: the path "\.\.\/secrets\.txt" is outside the module's folder/);
    expect(() => ev(`file("/etc/passwd")`)).toThrow(/the path "\/etc\/passwd" is outside the module's folder/);
    expect(() => ev(`fileset("templates/../..", "*")`)).toThrow(/outside the module's folder/);
    expect(() => ev(`file("nope.txt")`)).toThrow(/no file exists at "nope\.txt"; this function works only with files that are distributed as part of the configuration source code/);
    expect(() => ev(`templatefile("templates/greeting.tpl", { tags = [] })`)).toThrow(/greeting\.tpl:1: Invalid reference: "name" alone is not a value/);
    expect(() => ev(`templatefile("templates/nested.tpl", {})`)).toThrow(/cannot recursively call templatefile/);
    expect(() => ev(`abspath("x")`)).toThrow(/abspath is refused by the builtin engine/);
  });
});

describe("type conversion and numbers", () => {
  it("tostring, tonumber, tobool, try, can", () => {
    expect(ev(`tostring(5)`)).toBe("5");
    expect(ev(`tonumber("5.5")`)).toBe(5.5);
    expect(ev(`tobool("true")`)).toBe(true);
    expect(ev(`tostring(null)`)).toBe(null);
    expect(() => ev(`tonumber("five")`)).toThrow(/Invalid value for "v" parameter: cannot convert "five" to number; given string must be a decimal representation of a number/);
    expect(() => ev(`tobool("yes")`)).toThrow(/cannot convert "yes" to bool; only the strings "true" or "false" are allowed/);
    expect(() => ev(`tostring([1])`)).toThrow(/cannot convert tuple to string/);
    expect(ev(`try(var.m.nope, var.m.k, "d")`)).toBe("v");
    expect(ev(`try(tonumber("x"), 0)`)).toBe(0);
    expect(ev(`can(regex("^a", "abc"))`)).toBe(true);
    expect(ev(`can(var.m.nope)`)).toBe(false);
    expect(isUnknown(ev(`try(random_id.r.hex, "x")`))).toBe(true);
    expect(() => ev(`try(var.m.nope)`)).toThrow(/Call to function "try" failed: no expression succeeded/);
  });

  it("numeric functions", () => {
    expect(ev(`abs(-2)`)).toBe(2);
    expect(ev(`ceil(1.2)`)).toBe(2);
    expect(ev(`floor(1.8)`)).toBe(1);
    expect(ev(`log(8, 2)`)).toBe(3);
    expect(ev(`pow(2, 10)`)).toBe(1024);
    expect(ev(`signum(-7)`)).toBe(-1);
    expect(ev(`parseint("ff", 16)`)).toBe(255);
    expect(ev(`parseint("-101", 2)`)).toBe(-5);
    expect(() => ev(`parseint("12", 1)`)).toThrow(/base must be a whole number between 2 and 62/);
    expect(() => ev(`parseint("xyz", 10)`)).toThrow(/cannot parse "xyz" as a base 10 integer/);
  });

  it("argument counts are checked as OpenTofu words them", () => {
    expect(() => ev(`upper()`)).toThrow(/Not enough function arguments: function "upper" expects 1 argument\(s\)\. Missing value for "str"/);
    expect(() => ev(`nope()`)).toThrow(/Call to unknown function: there is no function named "nope"/);
  });
});
