// A tolerant reader of HCL's structure: the top-level blocks and attributes of a body with their raw
// text and line, for any module OpenTofu accepts (for expressions, dynamic blocks, functions the
// builtin engine does not know). Registration reads a module's `variable` blocks and providers with
// it; the values inside are evaluated by the engine's parser where they are literals.

export type HclItem =
  | { kind: "attribute"; name: string; text: string; line: number }
  | { kind: "block"; type: string; labels: string[]; body: string; line: number; bodyLine: number };

/** Line number (1-based) of `offset` in `src`, plus `base - 1`. */
function lineAt(src: string, offset: number, base: number): number {
  let n = base;
  for (let i = 0; i < offset && i < src.length; i++) if (src.charCodeAt(i) === 10) n++;
  return n;
}

/** Index just after a quoted string starting at `i` (`"`), through its escapes and `${ … }` / `%{ … }` templates. */
function skipString(src: string, i: number): number {
  i++;
  while (i < src.length) {
    const c = src[i];
    if (c === "\\") i += 2;
    else if (c === '"') return i + 1;
    else if ((c === "$" || c === "%") && src[i + 1] === "{") i = skipBalanced(src, i + 1);
    else if (c === "\n") return i; // an unterminated string ends at its line, as HCL reports it
    else i++;
  }
  return i;
}

/** Index just after a heredoc whose `<<` is at `i`, or -1 when it is not one. */
function skipHeredoc(src: string, i: number): number {
  const m = /^<<-?([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\r?\n/.exec(src.slice(i, i + 200));
  if (!m) return -1;
  let at = i + m[0].length;
  while (at < src.length) {
    const end = src.indexOf("\n", at);
    const line = src.slice(at, end === -1 ? src.length : end);
    if (line.trim() === m[1]) return end === -1 ? src.length : end;
    if (end === -1) return src.length;
    at = end + 1;
  }
  return src.length;
}

/** Index just after a comment starting at `i`, or -1 when none starts there. */
function skipComment(src: string, i: number): number {
  if (src[i] === "#" || (src[i] === "/" && src[i + 1] === "/")) {
    const end = src.indexOf("\n", i);
    return end === -1 ? src.length : end;
  }
  if (src[i] === "/" && src[i + 1] === "*") {
    const end = src.indexOf("*/", i + 2);
    return end === -1 ? src.length : end + 2;
  }
  return -1;
}

const OPEN = "([{";
const CLOSE = ")]}";

/** Index just after the bracket that closes the one at `i`. */
function skipBalanced(src: string, i: number): number {
  let depth = 0;
  while (i < src.length) {
    const c = src[i];
    const comment = skipComment(src, i);
    if (comment !== -1) {
      i = comment;
      continue;
    }
    if (c === '"') {
      i = skipString(src, i);
      continue;
    }
    if (c === "<" && src[i + 1] === "<") {
      const h = skipHeredoc(src, i);
      if (h !== -1) {
        i = h;
        continue;
      }
    }
    if (OPEN.includes(c)) depth++;
    else if (CLOSE.includes(c)) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return i;
}

/** Index of the end of an expression starting at `i`: the end of its line, outside brackets. */
function expressionEnd(src: string, i: number): number {
  while (i < src.length) {
    const c = src[i];
    if (c === "\n") return i;
    const comment = skipComment(src, i);
    if (comment !== -1) {
      i = comment;
      continue;
    }
    if (c === '"') i = skipString(src, i);
    else if (c === "<" && src[i + 1] === "<" && skipHeredoc(src, i) !== -1) i = skipHeredoc(src, i);
    else if (OPEN.includes(c)) i = skipBalanced(src, i);
    else if (CLOSE.includes(c)) return i;
    else i++;
  }
  return i;
}

export class HclScanError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

/** The attributes and blocks of a body (a file, or a block's inside), in order. */
export function scanHclBody(src: string, firstLine = 1): HclItem[] {
  const items: HclItem[] = [];
  let i = 0;
  const ident = /[A-Za-z_][A-Za-z0-9_-]*/y;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c) || c === ",") {
      i++;
      continue;
    }
    const comment = skipComment(src, i);
    if (comment !== -1) {
      i = comment;
      continue;
    }
    ident.lastIndex = i;
    const m = ident.exec(src);
    if (!m) throw new HclScanError(`unexpected "${c}": expected an argument or a block`, lineAt(src, i, firstLine));
    const start = i;
    i += m[0].length;
    while (src[i] === " " || src[i] === "\t") i++;
    if ((src[i] === "=" && src[i + 1] !== "=") || src[i] === ":") {
      const from = i + 1;
      const end = expressionEnd(src, from);
      items.push({ kind: "attribute", name: m[0], text: src.slice(from, end).trim(), line: lineAt(src, start, firstLine) });
      i = end;
      continue;
    }
    const labels: string[] = [];
    for (;;) {
      while (src[i] === " " || src[i] === "\t") i++;
      if (src[i] === '"') {
        const end = skipString(src, i);
        labels.push(src.slice(i + 1, end - 1));
        i = end;
      } else {
        ident.lastIndex = i;
        const l = ident.exec(src);
        if (!l) break;
        labels.push(l[0]);
        i += l[0].length;
      }
    }
    if (src[i] !== "{") throw new HclScanError(`expected "{" to open the ${m[0]} block, or "=" for an argument`, lineAt(src, i, firstLine));
    const end = skipBalanced(src, i);
    items.push({
      kind: "block",
      type: m[0],
      labels,
      body: src.slice(i + 1, end - 1),
      line: lineAt(src, start, firstLine),
      bodyLine: lineAt(src, i + 1, firstLine),
    });
    i = end;
  }
  return items;
}
