// Delete protection, the one rule: under a flow-control policy with "Protect deletes" on, a plan
// that is not a destroy keeps every planned delete and replace in view, marked not executed, and
// the apply leaves those objects in place. A destroy job is the explicit way to delete: it deletes
// everything, whatever the policy says. The builtin engine applies the rule (engine/ops/plan.ts);
// engines that cannot leave a change out refuse an apply whose plan deletes or replaces instead (runner/engines/tofu.ts,
// pulumi.ts: Pulumi's update is held to its saved plan by `up --plan`).

import type { z } from "zod";
import { firstAndMore } from "./display";
import type { notExecutedSchema } from "./api/schemas";

/** The reason code a not-executed change carries in a saved plan, a progress event and a plan review. */
export const DELETE_PROTECTION = "delete_protection" as const;

/** What a saved plan's change says when it will not be carried out (its shape: lib/api/schemas.ts). */
export type NotExecuted = z.infer<typeof notExecutedSchema>;

/** The toggle's text, the same on the Flow Control page and the component's policy card. */
export const PROTECT_DELETES_EXPLAIN =
  "Updates never delete: a planned delete or replace stays in the plan marked (not executed), and the apply leaves the object in place. A destroy job is the explicit way to delete; it deletes everything.";

const POLICY_OFF = 'turn "Protect deletes" off for the component\'s flow-control policy (Settings → Flow Control) and run the update again';
const FIX = `run a destroy job for the component, or ${POLICY_OFF}`;

export function protectedDeleteMessage(address: string): string {
  return `${address} is not deleted: delete protection is on for this component, so an update leaves it in place. To delete it, ${FIX}.`;
}

export function protectedReplaceMessage(address: string): string {
  return (
    `${address} is not replaced: delete protection is on for this component, and a replace would delete the object first ` +
    `(creating the new one alone would collide with the object that keeps running). To replace it, ${FIX}.`
  );
}

/** The words a UI line, a log and the CLI append to a change that will not be carried out. */
export const NOT_EXECUTED = "(not executed)";

/** Addresses in a sentence: the first five, and how many more. */
export const someAddresses = (addresses: string[]): string => firstAndMore(addresses, 5);

/** tofu/terraform/pulumi: the plan deletes or replaces, and the CLI cannot leave those changes out of an apply. */
export function engineCannotProtectPlan(engine: string, addresses: string[]): string {
  const list = someAddresses(addresses);
  return (
    `Nothing was applied: delete protection is on for this component, and the plan deletes or replaces ${addresses.length} resource(s) (${list}); ` +
    `${engine} cannot leave them out of an apply. To delete them, ${FIX}.`
  );
}

/** pulumi without a saved plan it can read: it cannot tell before an update whether the update deletes or replaces anything. */
export function engineCannotProtectUpdate(engine: string): string {
  return (
    `Nothing was applied: delete protection is on for this component, and ${engine} cannot tell before an update whether it deletes or replaces resources, ` +
    `so it cannot leave those changes out. To run the update, ${POLICY_OFF}; to delete, run a destroy job for the component.`
  );
}

/** "2 protected (not executed)": the words every summary (engine, console, CLI) gives the skipped count. */
export function skippedWords(n: number): string {
  return `${n} protected ${NOT_EXECUTED}`;
}

/** "1 delete, 1 replace": what a plan leaves out, by action. */
export function notExecutedWords(byAction: Record<string, number>): string {
  return Object.entries(byAction)
    .map(([action, n]) => `${n} ${action}`)
    .join(", ");
}

/** "1 inside a replacement: local_file.page": which of a summary's deletes are halves of replacements. */
export function insideReplacementWords(addresses: string[]): string {
  return `${addresses.length} inside a replacement${addresses.length === 1 ? "" : "s"}: ${addresses.join(", ")}`;
}
