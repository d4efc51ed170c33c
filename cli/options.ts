// Option parsers the command groups share.
import { InvalidArgumentError, Option } from "commander";

/** `--config bucket=x` / `--label zone=eu`, repeatable: collected into one record. */
export function keyValue(v: string, prev: Record<string, string> = {}): Record<string, string> {
  const i = v.indexOf("=");
  if (i < 1) throw new InvalidArgumentError(`expected key=value, got "${v}"`);
  return { ...prev, [v.slice(0, i)]: v.slice(i + 1) };
}

/** `--environments staging,prod` (repeatable too): the names, in order, once each. */
export function nameList(v: string, prev: string[] = []): string[] {
  return [...new Set([...prev, ...v.split(",").map((s) => s.trim()).filter(Boolean)])];
}

export const outputOption = () => new Option("-o, --output <format>", "table or json").choices(["table", "json"]).default("table");
