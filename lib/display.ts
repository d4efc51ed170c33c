// How the console and the CLI show the same things: a resource action's glyph and a duration.
import type { ResourcePayload } from "./runner-protocol";

export type ResourceAction = ResourcePayload["action"];

export const ACTION_GLYPH: Record<ResourceAction, string> = {
  create: "+",
  update: "~",
  delete: "-",
  replace: "±",
  import: "←",
  move: "→",
  forget: "⊘",
  read: "≡",
  noop: "·",
};

/** A glyph for any action name (one this version does not know shows as its name). */
export const glyphOf = (action: string): string => ACTION_GLYPH[action as ResourceAction] ?? action;

/** 850 ms, 12s, 3m 4s, 1h 2m. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m ${s % 60}s` : `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** The time between two instants, or "" when either is missing or they are out of order. */
export function durationBetween(from: Date | string | null | undefined, to: Date | string | null | undefined): string {
  if (!from || !to) return "";
  const ms = new Date(to).getTime() - new Date(from).getTime();
  return ms >= 0 ? formatDuration(ms) : "";
}

/** A size as the CLI and the console show it: 512 B, 3.2 KiB, 1.5 MiB. */
export function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Names in a sentence: the first `first`, then how many more ("a, b and 3 more"). */
export function firstAndMore(names: string[], first: number): string {
  const shown = names.slice(0, first).join(", ");
  return names.length > first ? `${shown} and ${names.length - first} more` : shown;
}
