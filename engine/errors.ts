import type { SourceRange } from "./config/ast";
import type { Diagnostic } from "./types";

/** Base class: every refusal from the engine is an EngineError carrying diagnostics. */
export class EngineError extends Error {
  readonly diagnostics: Diagnostic[];
  constructor(message: string, diagnostics?: Diagnostic[]) {
    super(message);
    this.name = "EngineError";
    this.diagnostics = diagnostics ?? [{ severity: "error", summary: message.split("\n")[0]!, detail: message }];
  }
}

/** A configuration problem; the message starts with `file:line: `. */
export class ConfigError extends EngineError {
  readonly range: SourceRange | undefined;
  constructor(summary: string, range?: SourceRange, detail?: string) {
    const where = range ? `${range.file}:${range.line}: ` : "";
    super(`${where}${summary}${detail ? `\n${detail}` : ""}`, [
      { severity: "error", summary, detail: detail ?? "", range: range ? toDiagRange(range) : undefined },
    ]);
    this.name = "ConfigError";
    this.range = range;
  }
}

export class CycleError extends EngineError {
  readonly cycles: string[][];
  constructor(cycles: string[][]) {
    super(cycles.map((c) => `Cycle: ${c.join(", ")}`).join("\n"));
    this.name = "CycleError";
    this.cycles = cycles;
  }
}

export class StalePlanError extends EngineError {
  constructor(message: string) {
    super(message);
    this.name = "StalePlanError";
  }
}

export function toDiagRange(r: SourceRange): NonNullable<Diagnostic["range"]> {
  return {
    filename: r.file,
    start: { line: r.line, column: r.column, byte: 0 },
    end: { line: r.line, column: r.column, byte: 0 },
  };
}
