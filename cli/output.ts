// Printing: colour only when stdout is a terminal and NO_COLOR is unset (FORCE_COLOR forces it).
export class Refusal extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = "Refusal";
  }
}

export const useColor = (): boolean => {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false;
  if (process.env.FORCE_COLOR && process.env.FORCE_COLOR !== "0") return true;
  return !!process.stdout.isTTY;
};

const paint = (code: string) => (s: string) => (useColor() ? `\x1b[${code}m${s}\x1b[0m` : s);
export const c = {
  bold: paint("1"),
  dim: paint("2"),
  red: paint("31"),
  green: paint("32"),
  yellow: paint("33"),
  blue: paint("34"),
  magenta: paint("35"),
  cyan: paint("36"),
};

/** Drops ANSI colours from engine log lines when colour is off. */
export const plain = (s: string) => (useColor() ? s : s.replace(/\x1b\[[0-9;]*m/g, ""));

export const out = (line = ""): void => void process.stdout.write(line + "\n");
export const err = (line = ""): void => void process.stderr.write(line + "\n");

export function table(rows: string[][], header?: string[]): string[] {
  const all = header ? [header, ...rows] : rows;
  const widths = all[0]?.map((_, i) => Math.max(...all.map((r) => (r[i] ?? "").length))) ?? [];
  const fmt = (r: string[]) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join("  ").trimEnd();
  return [...(header ? [c.bold(fmt(header))] : []), ...rows.map(fmt)];
}

export { durationBetween as duration } from "../lib/display";

/** A command's help footer: "Example:" (or "Examples:") and each command line after `$ `. */
export const example = (...lines: string[]) => `\nExample${lines.length > 1 ? "s" : ""}:\n${lines.map((l) => `  $ ${l}`).join("\n")}\n`;


export function actionColor(action: string): (s: string) => string {
  if (action === "create" || action === "import") return c.green;
  if (action === "update" || action === "move") return c.yellow;
  if (action === "delete" || action === "forget") return c.red;
  if (action === "replace") return c.magenta;
  return (s) => s;
}
