import type { Attribute, BinaryOp, Block, Body, Expr, ForExpr, SourceRange, TraversalStep } from "./ast";
import { lex, lexTemplate, type TemplatePart, type Token } from "./lexer";
import { ConfigError } from "../errors";

/** Parses one `.tf` file's text into a body of attributes and blocks. */
export function parseFile(source: string, file: string): Body {
  const p = new Parser(lex(source, file));
  const body = p.body(true);
  return body;
}

/** Parses a standalone expression (used by tests and for interpolation). */
export function parseExpression(source: string, file = "<expr>"): Expr {
  const p = new Parser(lex(source, file));
  const e = p.expression();
  p.skipNewlines();
  p.expectEof();
  return e;
}

/** Parses a template file's text (for templatefile): text, `${…}` and `%{…}` with no surrounding quotes. */
export function parseTemplate(source: string, file: string): Expr {
  const e = templateExpr(lexTemplate(source, file), { file, line: 1, column: 1 });
  return e.kind === "template" ? { ...e, directives: true } : e;
}

const BINARY_LEVELS: BinaryOp[][] = [["||"], ["&&"], ["==", "!="], ["<", ">", "<=", ">="], ["+", "-"], ["*", "/", "%"]];

class Parser {
  private i = 0;
  /** >0 while inside ( ) or [ ], where newlines are insignificant. */
  private nesting = 0;

  constructor(private readonly toks: Token[]) {}

  private peek(offset = 0): Token {
    if (this.nesting > 0) {
      let j = this.i;
      let seen = 0;
      for (;;) {
        const t = this.toks[j]!;
        if (t.kind === "newline") {
          j++;
          continue;
        }
        if (seen === offset || t.kind === "eof") return t;
        seen++;
        j++;
      }
    }
    return this.toks[Math.min(this.i + offset, this.toks.length - 1)]!;
  }

  private next(): Token {
    if (this.nesting > 0) this.skipNewlines();
    const t = this.toks[this.i]!;
    if (t.kind !== "eof") this.i++;
    return t;
  }

  skipNewlines(): void {
    while (this.toks[this.i]!.kind === "newline") this.i++;
  }

  private isPunct(v: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === "punct" && t.value === v;
  }

  private expectPunct(v: string, what: string): Token {
    const t = this.next();
    if (t.kind !== "punct" || t.value !== v) this.fail(`Expected ${what} ("${v}") but found ${describe(t)}`, t.range);
    return t;
  }

  expectEof(): void {
    const t = this.peek();
    if (t.kind !== "eof") this.fail(`Unexpected ${describe(t)} after expression`, t.range);
  }

  private fail(message: string, range: SourceRange): never {
    throw new ConfigError(message, range);
  }

  body(topLevel: boolean): Body {
    const body: Body = { attributes: [], blocks: [] };
    for (;;) {
      this.skipNewlines();
      const t = this.peek();
      if (t.kind === "eof") {
        if (!topLevel) this.fail("Unclosed block: expected \"}\" before end of file", t.range);
        return body;
      }
      if (t.kind === "punct" && t.value === "}") {
        if (topLevel) this.fail("Unexpected \"}\": there is no block to close", t.range);
        return body;
      }
      if (t.kind !== "ident") this.fail(`Expected an argument or block definition but found ${describe(t)}`, t.range);
      this.next();
      if (this.isPunct("=")) {
        this.next();
        const expr = this.expression();
        if (body.attributes.some((a) => a.name === t.value)) {
          this.fail(`Duplicate argument "${t.value}": an argument can be set only once in a block`, t.range);
        }
        body.attributes.push({ name: t.value, expr, range: t.range, end: this.peek().range } satisfies Attribute);
        this.endOfItem();
        continue;
      }
      const labels: string[] = [];
      for (;;) {
        const l = this.peek();
        if (l.kind === "template" && l.parts.every((p) => p.kind === "text")) {
          this.next();
          labels.push(l.parts.map((p) => (p.kind === "text" ? p.value : "")).join(""));
        } else if (l.kind === "ident") {
          this.next();
          labels.push(l.value);
        } else break;
      }
      this.expectPunct("{", `"{" to open the ${t.value} block`);
      const inner = this.body(false);
      this.expectPunct("}", `"}" to close the ${t.value} block`);
      body.blocks.push({ type: t.value, labels, body: inner, range: t.range } satisfies Block);
      this.endOfItem();
    }
  }

  private endOfItem(): void {
    const t = this.peek();
    if (t.kind === "newline" || t.kind === "eof") return;
    if (t.kind === "punct" && t.value === "}") return;
    this.fail(`Unexpected ${describe(t)}: each argument or block must end with a newline`, t.range);
  }

  expression(): Expr {
    const cond = this.binary(0);
    if (this.isPunct("?")) {
      this.next();
      const then = this.expression();
      this.expectPunct(":", "\":\" in the conditional expression");
      const otherwise = this.expression();
      return { kind: "conditional", cond, then, else: otherwise, range: cond.range };
    }
    return cond;
  }

  private binary(level: number): Expr {
    if (level >= BINARY_LEVELS.length) return this.unary();
    let left = this.binary(level + 1);
    for (;;) {
      const t = this.peek();
      if (t.kind !== "punct" || !(BINARY_LEVELS[level] as string[]).includes(t.value)) return left;
      this.next();
      const right = this.binary(level + 1);
      left = { kind: "binary", op: t.value as BinaryOp, left, right, range: left.range };
    }
  }

  private unary(): Expr {
    const t = this.peek();
    if (t.kind === "punct" && (t.value === "-" || t.value === "!")) {
      this.next();
      return { kind: "unary", op: t.value, operand: this.unary(), range: t.range };
    }
    return this.postfix(this.primary());
  }

  private postfix(target: Expr): Expr {
    const steps: TraversalStep[] = [];
    for (;;) {
      if (this.isPunct(".")) {
        this.next();
        const t = this.next();
        if (t.kind === "ident") steps.push({ kind: "attr", name: t.value });
        else if (t.kind === "number") steps.push({ kind: "index", key: { kind: "literal", value: t.value, range: t.range } });
        else if (t.kind === "punct" && t.value === "*") steps.push({ kind: "splat", attrOnly: true });
        else this.fail(`Expected an attribute name after "." but found ${describe(t)}`, t.range);
      } else if (this.isPunct("[") ) {
        this.next();
        this.nesting++;
        if (this.isPunct("*")) {
          this.next();
          steps.push({ kind: "splat" });
        } else steps.push({ kind: "index", key: this.expression() });
        this.expectPunct("]", "\"]\" to close the index");
        this.nesting--;
      } else break;
    }
    if (steps.length === 0) return target;
    if (target.kind === "scope") return { ...target, steps: [...target.steps, ...steps] };
    return { kind: "postfix", target, steps, range: target.range };
  }

  private primary(): Expr {
    const t = this.next();
    switch (t.kind) {
      case "number":
        return { kind: "literal", value: t.value, range: t.range };
      case "template":
        return templateExpr(t.parts, t.range);
      case "ident": {
        if (t.value === "true" || t.value === "false") return { kind: "literal", value: t.value === "true", range: t.range };
        if (t.value === "null") return { kind: "literal", value: null, range: t.range };
        if (this.isPunct("(")) {
          this.next();
          this.nesting++;
          const args: Expr[] = [];
          let expandFinal = false;
          while (!this.isPunct(")")) {
            args.push(this.expression());
            if (this.isPunct("...")) {
              this.next();
              expandFinal = true;
              if (!this.isPunct(")")) this.fail(`Missing close parenthesis: an expanded argument ("...") must be the last argument of ${t.value}`, this.peek().range);
              break;
            }
            if (!this.isPunct(",")) break;
            this.next();
          }
          this.expectPunct(")", `")" to close the call to ${t.value}`);
          this.nesting--;
          return { kind: "call", name: t.value, args, ...(expandFinal ? { expandFinal } : {}), range: t.range };
        }
        return { kind: "scope", root: t.value, steps: [], range: t.range };
      }
      case "punct":
        if (t.value === "(") {
          this.nesting++;
          const e = this.expression();
          this.expectPunct(")", "\")\" to close the parenthesis");
          this.nesting--;
          return e;
        }
        if (t.value === "[") return this.tuple(t.range);
        if (t.value === "{") return this.object(t.range);
        break;
      default:
        break;
    }
    return this.fail(`Invalid expression: expected a value but found ${describe(t)}`, t.range);
  }

  private tuple(range: SourceRange): Expr {
    this.nesting++;
    const t = this.peek();
    if (t.kind === "ident" && t.value === "for") {
      const e = this.forExpr(range, false);
      this.nesting--;
      return e;
    }
    const items: Expr[] = [];
    while (!this.isPunct("]")) {
      items.push(this.expression());
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct("]", "\"]\" to close the list");
    this.nesting--;
    return { kind: "tuple", items, range };
  }

  private object(range: SourceRange): Expr {
    // Inside braces newlines separate items, so switch nesting off while parsing them.
    const saved = this.nesting;
    this.nesting = 0;
    this.skipNewlines();
    const first = this.peek();
    if (first.kind === "ident" && first.value === "for" && !this.isPunct("=", 1) && !this.isPunct(":", 1)) {
      this.nesting = 1;
      const e = this.forExpr(range, true);
      this.nesting = saved;
      return e;
    }
    const items: { key: Expr; value: Expr }[] = [];
    for (;;) {
      this.skipNewlines();
      if (this.isPunct("}")) break;
      const k = this.peek();
      let key: Expr;
      if (k.kind === "ident" && (this.isPunct("=", 1) || this.isPunct(":", 1))) {
        this.next();
        key = { kind: "literal", value: k.value, range: k.range };
      } else {
        key = this.expression();
      }
      const sep = this.next();
      if (sep.kind !== "punct" || (sep.value !== "=" && sep.value !== ":")) {
        this.fail(`Expected "=" after the object key but found ${describe(sep)}`, sep.range);
      }
      const value = this.expression();
      items.push({ key, value });
      if (this.isPunct(",")) {
        this.next();
        continue;
      }
      const after = this.peek();
      if (!(after.kind === "newline" || (after.kind === "punct" && after.value === "}"))) {
        this.fail(`Expected a newline or "," after the object item but found ${describe(after)}`, after.range);
      }
    }
    this.expectPunct("}", "\"}\" to close the object");
    this.nesting = saved;
    return { kind: "object", items, range };
  }


  /** `k, v in coll` after a `for` — the header shared by for expressions and `%{ for }` directives. */
  forHeader(range: SourceRange): { keyVar?: string; valueVar: string; collection: Expr; range: SourceRange } {
    const ident = (what: string): string => {
      const t = this.next();
      if (t.kind !== "ident") this.fail(`Invalid "for" expression: expected ${what} but found ${describe(t)}`, t.range);
      return t.value;
    };
    let valueVar = ident("an iterator variable name after \"for\"");
    let keyVar: string | undefined;
    if (this.isPunct(",")) {
      this.next();
      keyVar = valueVar;
      valueVar = ident("a second iterator variable name after \",\"");
    }
    const inKw = this.next();
    if (inKw.kind !== "ident" || inKw.value !== "in") this.fail(`Invalid "for" expression: expected "in" after the iterator variables but found ${describe(inKw)}`, inKw.range);
    const collection = this.expression();
    return { keyVar, valueVar, collection, range };
  }

  /** `[for …]` (object false) or `{for …}` (object true); the opening bracket is consumed, the closing one is consumed here. */
  private forExpr(range: SourceRange, object: boolean): ForExpr {
    const head = this.forHeader(this.next().range);
    this.expectPunct(":", "\":\" after the for expression's collection");
    let key: Expr | undefined;
    let value = this.expression();
    let group = false;
    if (object) {
      this.expectPunct("=>", "\"=>\" between the key and the value of an object for expression");
      key = value;
      value = this.expression();
      if (this.isPunct("...")) {
        this.next();
        group = true;
      }
    } else if (this.isPunct("=>")) this.fail("Invalid \"for\" expression: key => value is only valid in an object for expression {for …}", this.peek().range);
    let cond: Expr | undefined;
    const t = this.peek();
    if (t.kind === "ident" && t.value === "if") {
      this.next();
      cond = this.expression();
    }
    this.expectPunct(object ? "}" : "]", object ? "\"}\" to close the for expression" : "\"]\" to close the for expression");
    return { kind: "for", keyVar: head.keyVar, valueVar: head.valueVar, collection: head.collection, key, value, cond, group, range };
  }

  /** The remaining tokens of a `%{ … }` directive, for templateExpr. */
  directive(): { word: string; range: SourceRange } {
    const t = this.next();
    if (t.kind !== "ident" || !["if", "else", "endif", "for", "endfor"].includes(t.value)) {
      this.fail(`Invalid template directive: expected if, else, endif, for or endfor after "%{" but found ${describe(t)}`, t.range);
    }
    return { word: t.value, range: t.range };
  }

  withNesting(n: number): this {
    this.nesting = n;
    return this;
  }
}

/** Builds the expression of a quoted string or heredoc: text, `${…}` interpolations and `%{ if }`/`%{ for }` directives. */
function templateExpr(raw: TemplatePart[], range: SourceRange): Expr {
  // Strip markers (`~`) trim all whitespace, newlines included, from the neighbouring text.
  const parts = raw.map((p) => ({ ...p }));
  parts.forEach((p, i) => {
    if (p.kind === "text") return;
    const before = parts[i - 1];
    const after = parts[i + 1];
    if (p.stripLeft && before?.kind === "text") before.value = before.value.replace(/\s+$/, "");
    if (p.stripRight && after?.kind === "text") after.value = after.value.replace(/^\s+/, "");
  });
  const hasDirectives = parts.some((p) => p.kind === "directive");
  let i = 0;
  const sequence = (stop: string[]): { items: (string | Expr)[]; ended?: { word: string; range: SourceRange } } => {
    const items: (string | Expr)[] = [];
    while (i < parts.length) {
      const p = parts[i++]!;
      if (p.kind === "text") {
        const last = items.length - 1;
        if (typeof items[last] === "string") items[last] += p.value;
        else if (p.value) items.push(p.value);
        continue;
      }
      const sub = new Parser(p.tokens).withNesting(1);
      if (p.kind === "interp") {
        const e = sub.expression();
        sub.expectEof();
        items.push(e);
        continue;
      }
      const d = sub.directive();
      if (stop.includes(d.word)) {
        sub.expectEof();
        return { items, ended: d };
      }
      if (d.word === "if") {
        const cond = sub.expression();
        sub.expectEof();
        const then = sequence(["else", "endif"]);
        let otherwise: (string | Expr)[] = [];
        if (then.ended?.word === "else") otherwise = sequence(["endif"]).items;
        else if (!then.ended) throw new ConfigError("Unterminated template directive: an %{ if } has no %{ endif }", d.range);
        const str = (xs: (string | Expr)[]): Expr => ({ kind: "template", parts: xs, range: d.range, directives: true });
        items.push({ kind: "conditional", cond, then: str(then.items), else: str(otherwise), range: d.range });
        continue;
      }
      if (d.word === "for") {
        const head = sub.forHeader(d.range);
        sub.expectEof();
        const body = sequence(["endfor"]);
        if (!body.ended) throw new ConfigError("Unterminated template directive: a %{ for } has no %{ endfor }", d.range);
        const value: Expr = { kind: "template", parts: body.items, range: d.range, directives: true };
        items.push({ kind: "templateJoin", items: { kind: "for", ...head, value, group: false, range: d.range }, range: d.range });
        continue;
      }
      throw new ConfigError(`Unexpected template directive: %{ ${d.word} } has no matching %{ ${d.word === "endfor" ? "for" : "if"} }`, d.range);
    }
    return { items };
  };
  const { items } = sequence([]);
  if (items.length === 0) return { kind: "literal", value: "", range };
  if (items.length === 1 && typeof items[0] === "string") return { kind: "literal", value: items[0], range };
  return { kind: "template", parts: items, range, ...(hasDirectives ? { directives: true } : {}) };
}

function describe(t: Token): string {
  switch (t.kind) {
    case "eof":
      return "end of input";
    case "newline":
      return "a newline";
    case "ident":
      return `"${t.value}"`;
    case "number":
      return `number ${t.value}`;
    case "template":
      return "a string";
    case "punct":
      return `"${t.value}"`;
  }
}
