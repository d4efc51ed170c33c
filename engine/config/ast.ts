/** Syntax tree of the HCL subset the builtin engine reads. */

export interface SourceRange {
  file: string;
  line: number;
  column: number;
}

export type TraversalStep =
  | { kind: "attr"; name: string }
  | { kind: "index"; key: Expr }
  | { kind: "splat" };

export type Expr =
  | { kind: "literal"; value: string | number | boolean | null; range: SourceRange }
  | { kind: "template"; parts: (string | Expr)[]; range: SourceRange }
  | { kind: "tuple"; items: Expr[]; range: SourceRange }
  | { kind: "object"; items: { key: Expr; value: Expr }[]; range: SourceRange }
  | { kind: "scope"; root: string; steps: TraversalStep[]; range: SourceRange }
  | { kind: "postfix"; target: Expr; steps: TraversalStep[]; range: SourceRange }
  | { kind: "call"; name: string; args: Expr[]; range: SourceRange }
  | { kind: "unary"; op: "-" | "!"; operand: Expr; range: SourceRange }
  | { kind: "binary"; op: BinaryOp; left: Expr; right: Expr; range: SourceRange }
  | { kind: "conditional"; cond: Expr; then: Expr; else: Expr; range: SourceRange };

export type BinaryOp = "+" | "-" | "*" | "/" | "%" | "==" | "!=" | "<" | ">" | "<=" | ">=" | "&&" | "||";

export interface Attribute {
  name: string;
  expr: Expr;
  range: SourceRange;
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
