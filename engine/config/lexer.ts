import type { SourceRange } from "./ast";
import { ConfigError } from "../errors";

/**
 * Tokens of the HCL subset. A quoted string or heredoc becomes one `template` token whose
 * interpolations carry their own token lists, so the parser can recurse into them.
 */
export type Token =
  | { kind: "ident"; value: string; range: SourceRange }
  | { kind: "number"; value: number; range: SourceRange }
  | { kind: "punct"; value: string; range: SourceRange }
  | { kind: "newline"; range: SourceRange }
  | { kind: "template"; parts: TemplatePart[]; range: SourceRange }
  | { kind: "eof"; range: SourceRange };

/** `${…}` or `%{…}`; `stripLeft`/`stripRight` are the `~` markers that trim whitespace from the text beside it. */
export type TemplatePart =
  | { kind: "text"; value: string }
  | { kind: "interp" | "directive"; tokens: Token[]; range: SourceRange; stripLeft: boolean; stripRight: boolean };

const PUNCT = ["==", "!=", "<=", ">=", "&&", "||", "=>", "...", "{", "}", "[", "]", "(", ")", "=", ",", ".", ":", "?", "!", "+", "-", "*", "/", "%", "<", ">"];

export function lex(source: string, file: string): Token[] {
  const lexer = new Lexer(source, file);
  const tokens = lexer.tokens(false);
  return tokens;
}

/** Lexes a whole text as template content (a templatefile's file), as a heredoc's body is. */
export function lexTemplate(source: string, file: string): TemplatePart[] {
  return new Lexer(source, file).templateBody();
}

class Lexer {
  private pos = 0;
  private line = 1;
  private col = 1;
  /** Set when the last `${…}`/`%{…}` lexed ended with `~}`. */
  private stripRight = false;

  constructor(
    private readonly src: string,
    private readonly file: string,
  ) {}

  private range(): SourceRange {
    return { file: this.file, line: this.line, column: this.col };
  }

  private fail(message: string, range = this.range()): never {
    throw new ConfigError(message, range);
  }

  private advance(n = 1): void {
    for (let i = 0; i < n; i++) {
      if (this.src[this.pos] === "\n") {
        this.line++;
        this.col = 1;
      } else this.col++;
      this.pos++;
    }
  }

  /** Lexes until end of input, or (inInterp) until the `}` closing a `${`. */
  tokens(inInterp: boolean): Token[] {
    const out: Token[] = [];
    let depth = 0;
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined) {
        if (inInterp) this.fail("Unterminated template interpolation: a \"${\" has no closing \"}\"");
        out.push({ kind: "eof", range: this.range() });
        return out;
      }
      if (c === " " || c === "\t" || c === "\r") {
        this.advance();
        continue;
      }
      if (inInterp && depth === 0 && c === "~" && this.src[this.pos + 1] === "}") {
        this.stripRight = true;
        this.advance(2);
        out.push({ kind: "eof", range: this.range() });
        return out;
      }
      if (c === "#" || (c === "/" && this.src[this.pos + 1] === "/")) {
        while (this.pos < this.src.length && this.src[this.pos] !== "\n") this.advance();
        continue;
      }
      if (c === "/" && this.src[this.pos + 1] === "*") {
        const start = this.range();
        const end = this.src.indexOf("*/", this.pos + 2);
        if (end < 0) this.fail("Unterminated comment: a \"/*\" has no closing \"*/\"", start);
        this.advance(end + 2 - this.pos);
        continue;
      }
      if (c === "\n") {
        out.push({ kind: "newline", range: this.range() });
        this.advance();
        continue;
      }
      if (/[A-Za-z_]/.test(c)) {
        const range = this.range();
        let value = "";
        while (/[A-Za-z0-9_-]/.test(this.src[this.pos] ?? "")) {
          value += this.src[this.pos];
          this.advance();
        }
        out.push({ kind: "ident", value, range });
        continue;
      }
      if (/[0-9]/.test(c)) {
        const range = this.range();
        const m = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.src.slice(this.pos))!;
        this.advance(m[0].length);
        out.push({ kind: "number", value: Number(m[0]), range });
        continue;
      }
      if (c === '"') {
        out.push(this.quoted());
        continue;
      }
      if (c === "<" && this.src.startsWith("<<", this.pos) && /^<<-?[A-Za-z_]/.test(this.src.slice(this.pos, this.pos + 4))) {
        out.push(this.heredoc());
        continue;
      }
      const p = PUNCT.find((x) => this.src.startsWith(x, this.pos));
      if (!p) this.fail(`Invalid character: "${c}" is not valid here`);
      if (inInterp && p === "{") depth++;
      if (inInterp && p === "}") {
        if (depth === 0) {
          this.advance();
          out.push({ kind: "eof", range: this.range() });
          return out;
        }
        depth--;
      }
      out.push({ kind: "punct", value: p, range: this.range() });
      this.advance(p.length);
    }
  }

  private quoted(): Token {
    const range = this.range();
    this.advance(); // opening quote
    const parts: TemplatePart[] = [];
    let text = "";
    for (;;) {
      const c = this.src[this.pos];
      if (c === undefined || c === "\n") this.fail("Unterminated string: a quoted string must close on the same line", range);
      if (c === '"') {
        this.advance();
        break;
      }
      if (c === "\\") {
        const n = this.src[this.pos + 1];
        const map: Record<string, string> = { n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\" };
        if (n !== undefined && n in map) {
          text += map[n];
          this.advance(2);
          continue;
        }
        if (n === "u") {
          const hex = this.src.slice(this.pos + 2, this.pos + 6);
          text += String.fromCharCode(parseInt(hex, 16));
          this.advance(6);
          continue;
        }
        this.fail(`Invalid escape sequence "\\${n}" in string`);
      }
      if (this.templateSequence(parts, text)) {
        text = "";
        continue;
      }
      text += c;
      this.advance();
    }
    if (text) parts.push({ kind: "text", value: text });
    return { kind: "template", parts, range };
  }

  /** Handles `${`, `$${`, `%{`, `%%{` at the cursor; returns true when it consumed something. */
  private templateSequence(parts: TemplatePart[], text: string): boolean {
    if (this.src.startsWith("$${", this.pos) || this.src.startsWith("%%{", this.pos)) {
      parts.push({ kind: "text", value: text + this.src[this.pos] + "{" });
      this.advance(3);
      return true;
    }
    const kind = this.src.startsWith("${", this.pos) ? "interp" : this.src.startsWith("%{", this.pos) ? "directive" : null;
    if (!kind) return false;
    if (text) parts.push({ kind: "text", value: text });
    const range = this.range();
    this.advance(2);
    const stripLeft = this.src[this.pos] === "~";
    if (stripLeft) this.advance();
    this.stripRight = false;
    const tokens = this.tokens(true);
    parts.push({ kind, tokens, range, stripLeft, stripRight: this.stripRight });
    return true;
  }

  private heredoc(): Token {
    const range = this.range();
    const m = /^<<(-?)([A-Za-z_][A-Za-z0-9_]*)[ \t]*\r?\n/.exec(this.src.slice(this.pos));
    if (!m) this.fail("Invalid heredoc: the marker must be followed by a newline");
    const indent = m[1] === "-";
    const marker = m[2];
    this.advance(m[0].length);
    // Find the closing marker line first, so the body can be lexed as a template.
    const lines: string[] = [];
    let rest = this.src.slice(this.pos);
    let bodyLen = 0;
    for (;;) {
      const nl = rest.indexOf("\n");
      const lineText = nl < 0 ? rest : rest.slice(0, nl);
      if (lineText.trim() === marker) {
        break;
      }
      if (nl < 0) this.fail(`Unterminated heredoc: no closing "${marker}" line`, range);
      lines.push(lineText);
      bodyLen += nl + 1;
      rest = rest.slice(nl + 1);
    }
    let body = this.src.slice(this.pos, this.pos + bodyLen);
    if (indent) {
      const widths = lines.filter((l) => l.trim() !== "").map((l) => /^[ \t]*/.exec(l)![0].length);
      const strip = widths.length ? Math.min(...widths) : 0;
      body = lines.map((l) => l.slice(Math.min(strip, /^[ \t]*/.exec(l)![0].length))).join("\n") + (lines.length ? "\n" : "");
    }
    // Lex the body as template text with a sub-lexer positioned at the body's first line.
    const sub = new Lexer(body, this.file);
    sub.line = this.line;
    const parts = sub.templateBody();
    this.advance(bodyLen);
    const closing = /^[ \t]*[A-Za-z0-9_]+/.exec(this.src.slice(this.pos))!;
    this.advance(closing[0].length);
    return { kind: "template", parts, range };
  }

  templateBody(): TemplatePart[] {
    const parts: TemplatePart[] = [];
    let text = "";
    while (this.pos < this.src.length) {
      if (this.templateSequence(parts, text)) {
        text = "";
        continue;
      }
      text += this.src[this.pos];
      this.advance();
    }
    if (text) parts.push({ kind: "text", value: text });
    return parts;
  }
}
