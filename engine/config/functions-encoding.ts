// Encoding, hashing and filesystem functions of OpenTofu's standard library. The filesystem
// functions read the module's own files (as loaded with it and kept in a saved plan), never the disk.
import { createHash } from "node:crypto";
import path from "node:path";
import YAML from "yaml";
import { argError, callError, canonical, map, str, type Fn, type FunctionContext } from "./function-args";
import { isObject, type Value } from "../values";

/** OpenTofu's JSON: object keys sorted, and <, >, & escaped as Go's encoder does. */
export function jsonEncode(v: Value): string {
  return JSON.stringify(canonical(v))
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

function fromYaml(v: unknown, param: string): Value {
  if (v === undefined || v === null) return null;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map((x) => fromYaml(x, param));
  if (typeof v === "object") return Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, fromYaml(x, param)]));
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
  throw argError(param, `unsupported YAML value ${String(v)}.`);
}

/** Go's url.QueryEscape: letters, digits and -_.~ stay; a space becomes +; everything else is %XX of its UTF-8 bytes. */
function urlencode(s: string): string {
  let out = "";
  for (const b of Buffer.from(s, "utf8")) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === " ") out += "+";
    else out += `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"', i++);
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") (row.push(field), (field = ""));
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      field = "";
      if (!(row.length === 1 && row[0] === "")) rows.push(row);
      row = [];
    } else field += c;
  }
  if (quoted) throw argError("str", "extraneous or missing \" in quoted-field.");
  if (field !== "" || row.length) (row.push(field), rows.push(row));
  return rows;
}

function csvdecode(text: string): Value {
  const [header, ...rows] = csvRows(text);
  if (!header) throw argError("str", "missing header line.");
  return rows.map((r, i) => {
    if (r.length !== header.length) throw argError("str", `record on line ${i + 2}: wrong number of fields.`);
    return Object.fromEntries(header.map((h, j) => [h, r[j]!]));
  });
}

/** A path inside the module folder, relative to it; a path that leaves the folder is refused, naming it. */
export function modulePath(p: string): string {
  const outside = () => argError("path", `the path ${JSON.stringify(p)} is outside the module's folder; the builtin engine reads only files inside the module.`);
  if (path.posix.isAbsolute(p) || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith("~")) throw outside();
  const n = path.posix.normalize(p.replace(/\\/g, "/"));
  if (n === ".." || n.startsWith("../")) throw outside();
  return n === "." ? "" : n.replace(/\/$/, "");
}

export function moduleFile(ctx: FunctionContext, p: string): string {
  const rel = modulePath(p);
  const text = ctx.files?.[rel];
  if (text === undefined) {
    throw argError(
      "path",
      `no file exists at ${JSON.stringify(p)}; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource.`,
    );
  }
  return text;
}

/** A glob (`*`, `**`, `?`, `{a,b}`, `[…]`) as a RegExp over slash-separated paths. */
function globRegExp(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      if (pattern[i + 2] === "/") (re += "(?:.*/)?", (i += 2));
      else (re += ".*", i++);
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "{") re += "(?:";
    else if (c === "}") re += ")";
    else if (c === "," && re.includes("(?:")) re += "|";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 1);
      if (end < 0) throw argError("pattern", `failed to glob pattern ${JSON.stringify(pattern)}: syntax error in pattern.`);
      re += `[${pattern.slice(i + 1, end).replace(/^!/, "^")}]`;
      i = end;
    } else re += c.replace(/[.+^$()|\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

const hashOf = (algo: string, encoding: "hex" | "base64") => (s: string) => createHash(algo).update(s, "utf8").digest(encoding);
const refused = (name: string, why: string): Fn => ({
  params: [],
  variadic: "args",
  call: () => {
    throw callError(`${name} is refused by the builtin engine: ${why}`);
  },
});

const HASHES: [string, string, "hex" | "base64"][] = [
  ["md5", "md5", "hex"],
  ["sha1", "sha1", "hex"],
  ["sha256", "sha256", "hex"],
  ["sha512", "sha512", "hex"],
  ["base64sha256", "sha256", "base64"],
  ["base64sha512", "sha512", "base64"],
];

export const ENCODING_FUNCTIONS: Record<string, Fn> = {
  jsonencode: { params: ["val"], call: ([v]) => jsonEncode(v!) },
  jsondecode: {
    params: ["str"],
    call: ([s]) => {
      try {
        return JSON.parse(str(s!, "str")) as Value;
      } catch (e) {
        throw argError("str", `${(e as Error).message}.`);
      }
    },
  },
  yamlencode: {
    params: ["value"],
    call: ([v]) => YAML.stringify(canonical(v!), { defaultStringType: "QUOTE_DOUBLE", defaultKeyType: "QUOTE_DOUBLE", indentSeq: false, lineWidth: 0 }),
  },
  yamldecode: {
    params: ["src"],
    call: ([s]) => {
      const docs = YAML.parseAllDocuments(str(s!, "src"));
      if (docs.length > 1) throw argError("src", "unexpected extra content after value.");
      const errs = docs[0]?.errors ?? [];
      if (errs.length) throw argError("src", `on line ${errs[0]!.linePos?.[0].line ?? "?"}: ${errs[0]!.message.split("\n")[0]}.`);
      return fromYaml(docs[0]?.toJS() ?? null, "src");
    },
  },
  base64encode: { params: ["str"], call: ([s]) => Buffer.from(str(s!, "str"), "utf8").toString("base64") },
  base64decode: {
    params: ["str"],
    call: ([s]) => {
      const v = str(s!, "str");
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) throw argError("str", `failed to decode base64 data ${JSON.stringify(v)}.`);
      const out = Buffer.from(v, "base64");
      const text = out.toString("utf8");
      if (!Buffer.from(text, "utf8").equals(out)) throw argError("str", "the result of decoding the provided string is not valid UTF-8.");
      return text;
    },
  },
  urlencode: { params: ["str"], call: ([s]) => urlencode(str(s!, "str")) },
  csvdecode: { params: ["str"], call: ([s]) => csvdecode(str(s!, "str")) },
  ...Object.fromEntries(HASHES.map(([name, algo, enc]) => [name, { params: ["str"], call: ([s]) => hashOf(algo, enc)(str(s!, "str")) } satisfies Fn])),
  ...Object.fromEntries(HASHES.map(([name, algo, enc]) => [`file${name}`, { params: ["path"], call: ([p], ctx) => hashOf(algo, enc)(moduleFile(ctx, str(p!, "path"))) } satisfies Fn])),
  uuid: refused("uuid", "it returns a different value on every run, so no plan would ever be up to date; use a random_id resource, whose value stays in the state."),
  bcrypt: refused("bcrypt", "it returns a different hash on every run, so no plan would ever be up to date; hash the value outside the module."),
  timestamp: refused("timestamp", "it returns a different value on every run, so no plan would ever be up to date; pass the time in as a variable."),
  file: { params: ["path"], call: ([p], ctx) => moduleFile(ctx, str(p!, "path")) },
  filebase64: { params: ["path"], call: ([p], ctx) => Buffer.from(moduleFile(ctx, str(p!, "path")), "utf8").toString("base64") },
  fileexists: {
    params: ["path"],
    call: ([p], ctx) => {
      const rel = modulePath(str(p!, "path"));
      return ctx.files?.[rel] !== undefined;
    },
  },
  fileset: {
    params: ["path", "pattern"],
    call: ([p, pat], ctx) => {
      const base = modulePath(str(p!, "path"));
      const re = globRegExp(str(pat!, "pattern"));
      const prefix = base ? `${base}/` : "";
      return Object.keys(ctx.files ?? {})
        .filter((f) => f.startsWith(prefix) && re.test(f.slice(prefix.length)))
        .map((f) => f.slice(prefix.length))
        .sort();
    },
  },
  dirname: { params: ["path"], call: ([p]) => path.posix.dirname(str(p!, "path")) },
  basename: { params: ["path"], call: ([p]) => path.posix.basename(str(p!, "path")) },
  abspath: refused("abspath", "an absolute path would name a folder on the runner, which changes from job to job; use a path relative to path.module."),
  pathexpand: refused("pathexpand", "the runner's home folder is not part of the module; use a path relative to path.module."),
};

/** For templatefile: the vars argument must be a map or object. */
export function templateVars(v: Value): Record<string, Value> {
  if (v === null) return {};
  if (!isObject(v)) throw argError("vars", "map of any single type required.");
  for (const k of Object.keys(v)) if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(k)) throw argError("vars", `invalid template variable name ${JSON.stringify(k)}: must start with a letter, followed by zero or more letters, digits, and underscores.`);
  return map(v, "vars");
}
