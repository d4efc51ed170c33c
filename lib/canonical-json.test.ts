import { describe, expect, it } from "vitest";
import { canonicalJson } from "./canonical-json";

describe("canonicalJson", () => {
  it("sorts object keys as strings at every depth, whatever order they arrived in", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    // Keys that look like numbers sort as strings ("10" before "2"), not in the engine's own integer-first order.
    expect(canonicalJson({ "2": "two", "10": "ten", b: true, "é": 1, A: 0 })).toBe('{"10":"ten","2":"two","A":0,"b":true,"é":1}');
  });

  it("writes what JSON.stringify writes for values: strings escaped, numbers, booleans and null; undefined members left out, undefined elements as null", () => {
    expect(canonicalJson({ s: 'a"b\n\u2028', n: -1.5e300, t: true, f: false, z: null, gone: undefined, list: [undefined, 1, "x"] })).toBe(
      '{"f":false,"list":[null,1,"x"],"n":-1.5e+300,"s":"a\\"b\\n\u2028","t":true,"z":null}',
    );
    expect([canonicalJson(undefined), canonicalJson(null), canonicalJson([]), canonicalJson({}), canonicalJson("x"), canonicalJson(7)]).toEqual(["null", "null", "[]", "{}", '"x"', "7"]);
  });

  it("gives equal bytes for equal documents, and JSON that parses back to the document", () => {
    const doc = { version: 4, serial: 5, lineage: "l", resources: [{ type: "local_file", instances: [{ attributes: { content: "x".repeat(50), filename: "f" } }] }], outputs: {} };
    const shuffled = JSON.parse(JSON.stringify({ resources: doc.resources, outputs: {}, lineage: "l", serial: 5, version: 4 }));
    expect(canonicalJson(shuffled)).toBe(canonicalJson(doc));
    expect(JSON.parse(canonicalJson(doc))).toEqual(doc);
  });
});
