import { NOT_EXECUTED, skippedWords } from "../lib/delete-protection";
import type { UiChange, ChangeAction, ChangeSummary, Diagnostic, NotExecuted, StateOutput, UiMessage, UiResourceAddr } from "./types";
import { formatModule, formatResource, parseAddress } from "./state/address";
import { ENGINE_VERSION, UI_VERSION } from "./version";

type Emit = (line: UiMessage) => void;
type Body = UiMessage extends infer T ? (T extends unknown ? Omit<T, "@level" | "@message" | "@module" | "@timestamp"> : never) : never;

export function resourceAddr(address: string): UiResourceAddr {
  const a = parseAddress(address);
  return {
    addr: address,
    module: formatModule(a.module),
    resource: formatResource(a),
    implied_provider: a.type === "terraform_data" ? "terraform" : a.type.split("_")[0]!,
    resource_type: a.type,
    resource_name: a.name,
    resource_key: a.key ?? null,
  };
}

const VERB: Record<string, [string, string, string]> = {
  // action: [starting, complete, errored]
  create: ["Creating...", "Creation complete", "Creation errored"],
  update: ["Modifying...", "Modifications complete", "Modifications errored"],
  delete: ["Destroying...", "Destruction complete", "Destruction errored"],
  import: ["Importing...", "Import complete", "Import errored"],
  read: ["Reading...", "Read complete", "Read errored"],
};

const PLAN_WORDS: Record<ChangeAction, string> = {
  noop: "No changes",
  create: "Plan to create",
  read: "Plan to read",
  update: "Plan to update",
  replace: "Plan to replace",
  delete: "Plan to delete",
  import: "Plan to import",
  move: "Plan to move",
  forget: "Plan to forget",
};

/** Builds OpenTofu-style machine-readable UI lines and hands them to emit. */
export class Ui {
  constructor(private readonly sink: Emit | undefined) {}

  private send(level: UiMessage["@level"], message: string, body: Body): void {
    this.sink?.({ "@level": level, "@message": message, "@module": "tofu.ui", "@timestamp": new Date().toISOString(), ...body } as UiMessage);
  }

  version(): void {
    this.send("info", `Planton builtin engine ${ENGINE_VERSION}`, { type: "version", tofu: ENGINE_VERSION, ui: UI_VERSION, engine: "planton-builtin" });
  }

  log(message: string, level: UiMessage["@level"] = "info"): void {
    this.send(level, message, { type: "log" });
  }

  plannedChange(address: string, action: ChangeAction, extra: { reason?: string; previous?: string; importId?: string; notExecuted?: NotExecuted } = {}): void {
    const change: UiChange = { resource: resourceAddr(address), action };
    if (extra.reason) change.reason = extra.reason;
    if (extra.previous) change.previous_resource = resourceAddr(extra.previous);
    if (extra.importId !== undefined) change.importing = { id: extra.importId };
    if (extra.notExecuted) change.not_executed = extra.notExecuted;
    const msg = action === "move" && extra.previous ? `${extra.previous}: Plan to move to ${address}` : `${address}: ${PLAN_WORDS[action]}`;
    this.send(extra.notExecuted ? "warn" : "info", extra.notExecuted ? `${msg} ${NOT_EXECUTED}` : msg, { type: "planned_change", change });
  }

  drift(address: string, action: ChangeAction): void {
    this.send("info", `${address}: Drift detected (${action})`, { type: "resource_drift", change: { resource: resourceAddr(address), action } });
  }

  summary(c: ChangeSummary, operation: "plan" | "apply" | "destroy"): void {
    let msg: string;
    const imp = c.import > 0;
    const forget = c.forget > 0 ? `, ${c.forget} to forget` : "";
    const skipped = c.skipped_deletes ? `, ${skippedWords(c.skipped_deletes)}` : "";
    if (operation === "plan") {
      msg = `Plan: ${imp ? `${c.import} to import, ` : ""}${c.add} to add, ${c.change} to change, ${c.remove} to destroy${forget}${skipped}.`;
    } else if (operation === "apply") {
      const forgot = c.forget > 0 ? `, ${c.forget} forgotten` : "";
      msg = `Apply complete! Resources: ${imp ? `${c.import} imported, ` : ""}${c.add} added, ${c.change} changed, ${c.remove} destroyed${forgot}${skipped}.`;
    } else msg = `Destroy complete! Resources: ${c.remove} destroyed.`;
    this.send("info", msg, { type: "change_summary", changes: { ...c, operation } });
  }

  applyStart(address: string, action: ChangeAction, id?: { key: string; value: string }): void {
    const suffix = id ? ` [${id.key}=${id.value}]` : "";
    const hook: Extract<UiMessage, { type: "apply_start" }>["hook"] = { resource: resourceAddr(address), action };
    if (id) Object.assign(hook, { id_key: id.key, id_value: id.value });
    this.send("info", `${address}: ${VERB[action]?.[0] ?? "Applying..."}${suffix}`, { type: "apply_start", hook });
  }

  applyComplete(address: string, action: ChangeAction, elapsed: number, id?: { key: string; value: string }): void {
    const suffix = id ? ` [${id.key}=${id.value}]` : "";
    const hook: Extract<UiMessage, { type: "apply_complete" }>["hook"] = { resource: resourceAddr(address), action, elapsed_seconds: elapsed };
    if (id) Object.assign(hook, { id_key: id.key, id_value: id.value });
    this.send("info", `${address}: ${VERB[action]?.[1] ?? "Apply complete"} after ${elapsed}s${suffix}`, { type: "apply_complete", hook });
  }

  applyErrored(address: string, action: ChangeAction, elapsed: number): void {
    this.send("error", `${address}: ${VERB[action]?.[2] ?? "Apply errored"} after ${elapsed}s`, {
      type: "apply_errored",
      hook: { resource: resourceAddr(address), action, elapsed_seconds: elapsed },
    });
  }

  refreshStart(address: string, id: { key: string; value: string }): void {
    this.send("info", `${address}: Refreshing state... [${id.key}=${id.value}]`, {
      type: "refresh_start",
      hook: { resource: resourceAddr(address), id_key: id.key, id_value: id.value },
    });
  }

  refreshComplete(address: string, id: { key: string; value: string }): void {
    this.send("info", `${address}: Refresh complete [${id.key}=${id.value}]`, {
      type: "refresh_complete",
      hook: { resource: resourceAddr(address), id_key: id.key, id_value: id.value },
    });
  }

  /** Applied outputs; sensitive values never leave the engine in a UI line. */
  outputs(outputs: Record<string, StateOutput>): void {
    const out: Extract<UiMessage, { type: "outputs" }>["outputs"] = {};
    for (const [name, o] of Object.entries(outputs)) {
      out[name] = o.sensitive ? { sensitive: true, type: o.type } : { sensitive: false, type: o.type, value: o.value };
    }
    this.send("info", `Outputs: ${Object.keys(out).length}`, { type: "outputs", outputs: out });
  }

  /** Planned outputs: only the action and sensitivity, as OpenTofu's plan does. */
  plannedOutputs(changes: Record<string, { action: "create" | "update" | "delete" | "noop"; sensitive: boolean }>): void {
    const out: Extract<UiMessage, { type: "outputs" }>["outputs"] = {};
    for (const [name, c] of Object.entries(changes)) out[name] = { sensitive: c.sensitive, action: c.action };
    this.send("info", `Outputs: ${Object.keys(out).length}`, { type: "outputs", outputs: out });
  }

  diagnostic(d: Diagnostic): void {
    const level = d.severity === "error" ? "error" : "warn";
    this.send(level, `${d.severity === "error" ? "Error" : "Warning"}: ${d.summary}`, { type: "diagnostic", diagnostic: d });
  }
}
