/** Syntax tree of the HCL subset the builtin engine reads. */

export interface SourceRange {
  file: string;
  line: number;
  column: number;
}

export type TraversalStep =
  | { kind: "attr"; name: string }
  | { kind: "index"; key: Expr }
  /** `[*]` applies every later step to each element; the legacy `.*` (attrOnly) only the attribute steps right after it. */
  | { kind: "splat"; attrOnly?: boolean };

export type Expr =
  | { kind: "literal"; value: string | number | boolean | null; range: SourceRange }
  /** `directives`: the template has %{ } directives, so it is always a string (no lone-interpolation shortcut). */
  | { kind: "template"; parts: (string | Expr)[]; range: SourceRange; directives?: boolean }
  | { kind: "tuple"; items: Expr[]; range: SourceRange }
  | { kind: "object"; items: { key: Expr; value: Expr }[]; range: SourceRange }
  | { kind: "scope"; root: string; steps: TraversalStep[]; range: SourceRange }
  | { kind: "postfix"; target: Expr; steps: TraversalStep[]; range: SourceRange }
  /** `expandFinal`: the last argument was written `xs...` and is spread into arguments. */
  | { kind: "call"; name: string; args: Expr[]; expandFinal?: boolean; range: SourceRange }
  | { kind: "unary"; op: "-" | "!"; operand: Expr; range: SourceRange }
  | { kind: "binary"; op: BinaryOp; left: Expr; right: Expr; range: SourceRange }
  | { kind: "conditional"; cond: Expr; then: Expr; else: Expr; range: SourceRange }
  | ForExpr
  /** A `%{ for }` directive: the for expression's items joined into one string. */
  | { kind: "templateJoin"; items: ForExpr; range: SourceRange };

/** `[for k, v in coll : value if cond]` or `{for k, v in coll : key => value... if cond}`. */
export interface ForExpr {
  kind: "for";
  keyVar?: string;
  valueVar: string;
  collection: Expr;
  /** Set for the object form `{for … : key => value}`. */
  key?: Expr;
  value: Expr;
  cond?: Expr;
  /** `value...`: values with the same key are grouped into a list. */
  group: boolean;
  range: SourceRange;
}

export type BinaryOp = "+" | "-" | "*" | "/" | "%" | "==" | "!=" | "<" | ">" | "<=" | ">=" | "&&" | "||";

export interface Attribute {
  name: string;
  expr: Expr;
  range: SourceRange;
  /** Where the expression ends (the start of the newline, "}" or end of file after it), to quote its source. */
  end?: SourceRange;
}

export interface Block {
  type: string;
  labels: string[];
  body: Body;
  range: SourceRange;
}

export interface Body {
  attributes: Attribute[];
  blocks: Block[];
}
