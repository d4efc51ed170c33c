import type { Attribute, BinaryOp, Block, Body, Expr, SourceRange, TraversalStep } from "./ast";
import { lex, type Token } from "./lexer";
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
        body.attributes.push({ name: t.value, expr, range: t.range } satisfies Attribute);
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
        else if (t.kind === "punct" && t.value === "*") steps.push({ kind: "splat" });
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
      case "template": {
        const parts: (string | Expr)[] = t.parts.map((p) => {
          if (p.kind === "text") return p.value;
          const sub = new Parser(p.tokens);
          sub.nesting = 1;
          const e = sub.expression();
          sub.expectEof();
          return e;
        });
        if (parts.length === 0) return { kind: "literal", value: "", range: t.range };
        if (parts.length === 1 && typeof parts[0] === "string") return { kind: "literal", value: parts[0], range: t.range };
        return { kind: "template", parts, range: t.range };
      }
      case "ident": {
        if (t.value === "true" || t.value === "false") return { kind: "literal", value: t.value === "true", range: t.range };
        if (t.value === "null") return { kind: "literal", value: null, range: t.range };
        if (this.isPunct("(")) {
          this.next();
          this.nesting++;
          const args: Expr[] = [];
          while (!this.isPunct(")")) {
            args.push(this.expression());
            if (this.isPunct("...")) this.fail("Expanding function arguments with \"...\" is not supported by the builtin engine", t.range);
            if (!this.isPunct(",")) break;
            this.next();
          }
          this.expectPunct(")", `")" to close the call to ${t.value}`);
          this.nesting--;
          return { kind: "call", name: t.value, args, range: t.range };
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
    if (t.kind === "ident" && t.value === "for") this.fail("\"for\" expressions are not supported by the builtin engine", t.range);
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
    const items: { key: Expr; value: Expr }[] = [];
    for (;;) {
      this.skipNewlines();
      if (this.isPunct("}")) break;
      const k = this.peek();
      if (k.kind === "ident" && k.value === "for") this.fail("\"for\" expressions are not supported by the builtin engine", k.range);
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
