// String and number functions of OpenTofu's standard library.
import { argError, callError, int, list, num, str, toStringValue, type Fn } from "./function-args";
import { isObject, type Value } from "../values";

/** A regular expression written in RE2 syntax (OpenTofu's) as a JavaScript RegExp. */
export function re2(pattern: string, flags = ""): RegExp {
  let p = pattern;
  let f = flags;
  const lead = /^\(\?([imsU]+)\)/.exec(p);
  if (lead) {
    for (const c of lead[1]!) if (c !== "U" && !f.includes(c)) f += c;
    p = p.slice(lead[0].length);
  }
  p = p.replace(/\(\?P</g, "(?<").replace(/\\z/g, "$").replace(/\\A/g, "^");
  try {
    return new RegExp(p, f);
  } catch (e) {
    throw argError("pattern", `invalid regular expression pattern: ${(e as Error).message}`);
  }
}

function regexResult(m: RegExpExecArray): Value {
  if (m.length === 1) return m[0];
  if (m.groups) return Object.fromEntries(Object.entries(m.groups).map(([k, v]) => [k, v ?? null]));
  return m.slice(1).map((x) => x ?? null);
}

/** Go's fmt verbs as OpenTofu's format uses them: %s %d %f %e %g %x %X %o %b %q %t %v %%, with flags, width and precision. */
function format(fmtValue: Value, args: Value[]): string {
  const fmt = str(fmtValue, "format");
  let next = 0;
  return fmt.replace(/%([-+ 0#]*)(?:\[(\d+)\])?(\*|\d+)?(?:\.(\d+))?([a-zA-Z%])/g, (_m, flags: string, explicit: string | undefined, width: string | undefined, precision: string | undefined, verb: string) => {
    if (verb === "%") return "%";
    if (explicit) next = Number(explicit) - 1;
    if (next >= args.length) throw callError(`not enough arguments for "%${verb}" at position ${next + 2}`);
    const a = args[next++]!;
    const prec = precision === undefined ? undefined : Number(precision);
    let out: string;
    switch (verb) {
      case "s":
        if (a === null) out = "null";
        else out = typeof a === "object" ? JSON.stringify(a) : toStringValue(a);
        if (prec !== undefined) out = [...out].slice(0, prec).join("");
        break;
      case "q":
        out = JSON.stringify(a === null ? "null" : typeof a === "object" ? JSON.stringify(a) : toStringValue(a));
        break;
      case "v":
        out = a === null ? "null" : typeof a === "string" ? a : typeof a === "object" ? JSON.stringify(a) : String(a);
        break;
      case "t":
        if (typeof a !== "boolean" && a !== "true" && a !== "false") throw callError(`unsupported value for "%t" at ${next}: bool required`);
        out = String(a === true || a === "true");
        break;
      case "d": {
        const n = num(a, "args");
        if (!Number.isInteger(n)) throw callError(`unsupported value for "%d" at ${next}: number has no integer representation`);
        out = String(Math.abs(n));
        out = (n < 0 ? "-" : flags.includes("+") ? "+" : flags.includes(" ") ? " " : "") + out;
        break;
      }
      case "f":
      case "F":
        out = signed(num(a, "args").toFixed(prec ?? 6), flags);
        break;
      case "e":
      case "E": {
        const s = num(a, "args").toExponential(prec ?? 6).replace(/e([+-])(\d)$/, "e$10$2");
        out = signed(verb === "E" ? s.toUpperCase() : s, flags);
        break;
      }
      case "g":
      case "G":
        out = signed(String(prec === undefined ? num(a, "args") : Number(num(a, "args").toPrecision(prec))), flags);
        break;
      case "x":
      case "X":
      case "o":
      case "b": {
        const base = { x: 16, X: 16, o: 8, b: 2 }[verb]!;
        const s = typeof a === "string" && verb !== "o" && verb !== "b" && Number.isNaN(Number(a)) ? Buffer.from(a).toString("hex") : Math.trunc(num(a, "args")).toString(base);
        out = verb === "X" ? s.toUpperCase() : s;
        break;
      }
      default:
        throw callError(`unrecognized format verb "%${verb}"`);
    }
    const w = width === undefined ? 0 : width === "*" ? 0 : Number(width);
    const len = [...out].length;
    if (len < w) {
      if (flags.includes("-")) out = out + " ".repeat(w - len);
      else if (flags.includes("0") && /[dfFeEgGxXob]/.test(verb)) out = out.replace(/^([+ -]?)/, (s) => s + "0".repeat(w - len));
      else out = " ".repeat(w - len) + out;
    }
    return out;
  });
}

const signed = (s: string, flags: string): string => (s.startsWith("-") ? s : flags.includes("+") ? `+${s}` : flags.includes(" ") ? ` ${s}` : s);

function formatlist(args: Value[]): Value[] {
  const fmt = args[0]!;
  const rest = args.slice(1);
  let n = -1;
  rest.forEach((a, i) => {
    if (!Array.isArray(a)) return;
    if (n >= 0 && a.length !== n) throw argError("args", `argument ${i + 1} has length ${a.length}, which is inconsistent with argument ${rest.findIndex(Array.isArray) + 1} of length ${n}`);
    n = a.length;
  });
  if (n < 0) return [format(fmt, rest)];
  return Array.from({ length: n }, (_, i) => format(fmt, rest.map((a) => (Array.isArray(a) ? a[i]! : a))));
}

const words = (s: string) => s.replace(/(^|[^\p{L}\p{N}'])(\p{L})/gu, (_m, pre: string, c: string) => pre + c.toUpperCase());

export const STRING_FUNCTIONS: Record<string, Fn> = {
  upper: { params: ["str"], call: ([s]) => str(s!, "str").toUpperCase() },
  lower: { params: ["str"], call: ([s]) => str(s!, "str").toLowerCase() },
  title: { params: ["str"], call: ([s]) => words(str(s!, "str")) },
  strrev: { params: ["str"], call: ([s]) => [...str(s!, "str")].reverse().join("") },
  trimspace: { params: ["str"], call: ([s]) => str(s!, "str").replace(/^\s+|\s+$/gu, "") },
  trim: {
    params: ["str", "cutset"],
    call: ([s, c]) => {
      const cut = new Set([...str(c!, "cutset")]);
      const chars = [...str(s!, "str")];
      let a = 0;
      let b = chars.length;
      while (a < b && cut.has(chars[a]!)) a++;
      while (b > a && cut.has(chars[b - 1]!)) b--;
      return chars.slice(a, b).join("");
    },
  },
  trimprefix: { params: ["str", "prefix"], call: ([s, p]) => (str(s!, "str").startsWith(str(p!, "prefix")) ? str(s!, "str").slice(str(p!, "prefix").length) : str(s!, "str")) },
  trimsuffix: {
    params: ["str", "suffix"],
    call: ([s, p]) => {
      const v = str(s!, "str");
      const suf = str(p!, "suffix");
      return suf && v.endsWith(suf) ? v.slice(0, -suf.length) : v;
    },
  },
  chomp: { params: ["str"], call: ([s]) => str(s!, "str").replace(/(\r?\n)+$/, "") },
  indent: {
    params: ["spaces", "str"],
    call: ([n, s]) => {
      const pad = " ".repeat(int(n!, "spaces"));
      return str(s!, "str").split("\n").map((l, i) => (i === 0 ? l : pad + l)).join("\n");
    },
  },
  startswith: { params: ["str", "prefix"], call: ([s, p]) => str(s!, "str").startsWith(str(p!, "prefix")) },
  endswith: { params: ["str", "suffix"], call: ([s, p]) => str(s!, "str").endsWith(str(p!, "suffix")) },
  strcontains: { params: ["str", "substr"], call: ([s, p]) => str(s!, "str").includes(str(p!, "substr")) },
  join: {
    params: ["separator"],
    variadic: "lists",
    call: ([sep, ...lists]) => {
      if (lists.length === 0) throw argError("lists", "at least one list is required.");
      const items = lists.flatMap((l) => list(l!, "lists"));
      return items
        .map((x, i) => {
          if (x === null) throw argError("lists", `element ${i} is null; cannot concatenate null values.`);
          if (typeof x === "object") throw argError("lists", "list of string required.");
          return toStringValue(x);
        })
        .join(str(sep!, "separator"));
    },
  },
  split: {
    params: ["separator", "str"],
    call: ([sep, s]) => {
      const v = str(s!, "str");
      if (v === "") return [""];
      const d = str(sep!, "separator");
      return d === "" ? [...v] : v.split(d);
    },
  },
  format: { params: ["format"], variadic: "args", call: ([f, ...rest]) => format(f!, rest) },
  formatlist: { params: ["format"], variadic: "args", call: (a) => formatlist(a) },
  replace: {
    params: ["str", "substr", "replace"],
    call: ([s, find, repl]) => {
      const v = str(s!, "str");
      const f = str(find!, "substr");
      const r = str(repl!, "replace");
      if (f.length > 1 && f.startsWith("/") && f.endsWith("/")) {
        // RE2 writes a group in the replacement as $1 or ${1}; JavaScript only knows $1 and $<name>.
        return v.replace(re2(f.slice(1, -1), "g"), r.replace(/\$\{(\d+)\}/g, "$$$1").replace(/\$\{([A-Za-z_]\w*)\}/g, "$$<$1>"));
      }
      return f === "" ? v : v.split(f).join(r);
    },
  },
  substr: {
    params: ["str", "offset", "length"],
    call: ([s, o, l]) => {
      const chars = [...str(s!, "str")];
      let off = int(o!, "offset");
      const len = int(l!, "length");
      if (off < 0) off = Math.max(0, chars.length + off);
      if (off > chars.length) throw argError("offset", "offset is greater than the length of the string.");
      return chars.slice(off, len < 0 ? undefined : off + len).join("");
    },
  },
  regex: {
    params: ["pattern", "string"],
    call: ([p, s]) => {
      const m = re2(str(p!, "pattern")).exec(str(s!, "string"));
      if (!m) throw callError("pattern did not match any part of the given string.");
      return regexResult(m);
    },
  },
  regexall: {
    params: ["pattern", "string"],
    call: ([p, s]) => [...str(s!, "string").matchAll(re2(str(p!, "pattern"), "g"))].map((m) => regexResult(m as RegExpExecArray)),
  },
  tostring: {
    params: ["v"],
    call: ([v]) => {
      if (v === null || typeof v === "string") return v!;
      if (typeof v === "number" || typeof v === "boolean") return String(v);
      throw argError("v", `cannot convert ${Array.isArray(v) ? "tuple" : "object"} to string.`);
    },
  },
  tonumber: {
    params: ["v"],
    call: ([v]) => {
      if (v === null || typeof v === "number") return v!;
      if (typeof v === "string" && /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v.trim()) && v.trim() === v) return Number(v);
      throw argError("v", typeof v === "string" ? `cannot convert ${JSON.stringify(v)} to number; given string must be a decimal representation of a number.` : `cannot convert ${typeof v === "boolean" ? "bool" : isObject(v) ? "object" : "tuple"} to number.`);
    },
  },
  tobool: {
    params: ["v"],
    call: ([v]) => {
      if (v === null || typeof v === "boolean") return v!;
      if (v === "true" || v === "false") return v === "true";
      throw argError("v", typeof v === "string" ? `cannot convert ${JSON.stringify(v)} to bool; only the strings "true" or "false" are allowed.` : `cannot convert ${typeof v === "number" ? "number" : isObject(v) ? "object" : "tuple"} to bool.`);
    },
  },
  abs: { params: ["num"], call: ([v]) => Math.abs(num(v!, "num")) },
  floor: { params: ["num"], call: ([v]) => Math.floor(num(v!, "num")) },
  ceil: { params: ["num"], call: ([v]) => Math.ceil(num(v!, "num")) },
  signum: { params: ["num"], call: ([v]) => Math.sign(num(v!, "num")) },
  log: { params: ["num", "base"], call: ([v, b]) => Math.log(num(v!, "num")) / Math.log(num(b!, "base")) },
  pow: { params: ["num", "power"], call: ([v, p]) => Math.pow(num(v!, "num"), num(p!, "power")) },
  parseint: {
    params: ["number", "base"],
    call: ([v, b]) => {
      const base = int(b!, "base");
      if (base < 2 || base > 62) throw argError("base", "base must be a whole number between 2 and 62 inclusive.");
      const s = str(v!, "number");
      const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".slice(0, base);
      const body = s.replace(/^[+-]/, "");
      const ok = body !== "" && [...body].every((c) => (base <= 36 ? digits.includes(c.toLowerCase()) : digits.includes(c)));
      if (!ok) throw argError("number", `cannot parse ${JSON.stringify(s)} as a base ${base} integer.`);
      let n = 0;
      for (const c of body) n = n * base + (base <= 36 ? digits.indexOf(c.toLowerCase()) : digits.indexOf(c));
      return s.startsWith("-") ? -n : n;
    },
  },
  min: {
    params: [],
    variadic: "numbers",
    call: (a) => {
      if (a.length === 0) throw argError("numbers", "must pass at least one number.");
      return Math.min(...a.map((x) => num(x, "numbers")));
    },
  },
  max: {
    params: [],
    variadic: "numbers",
    call: (a) => {
      if (a.length === 0) throw argError("numbers", "must pass at least one number.");
      return Math.max(...a.map((x) => num(x, "numbers")));
    },
  },
};
