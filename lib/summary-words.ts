// How a change summary reads, the same in the console and the CLI: what a plan would do in the
// future tense, what an apply or destroy did in the past tense (from the summary's own operation).
import { insideReplacementWords, skippedWords } from "./delete-protection";
import type { SummaryPayload } from "./runner-protocol";

export function summaryWords(s: SummaryPayload): string {
  const inside = s.replacements?.length ? ` (${insideReplacementWords(s.replacements)})` : "";
  const done = s.operation !== "plan";
  const parts = done ? [`${s.add} added`, `${s.change} changed`, `${s.remove} destroyed${inside}`] : [`${s.add} to add`, `${s.change} to change`, `${s.remove} to destroy${inside}`];
  if (s.import) parts.push(done ? `${s.import} imported` : `${s.import} to import`);
  if (s.forget) parts.push(done ? `${s.forget} forgotten` : `${s.forget} to forget`);
  if (s.skippedDeletes) parts.push(skippedWords(s.skippedDeletes));
  return parts.join(", ");
}

/** A plan made without refresh (delete_operations_computed false), in the plan review's notes and on the job page. */
export const DELETES_NOT_COMPUTED = "Refresh was skipped, so deletes of things already gone could not be computed; zero deletes here does not mean none are needed.";
