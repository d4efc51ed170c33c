import type { ChangeAction, UiMessage } from "./types";

const RESET = "\x1b[0m";
const BOLD = "\x1b[1m";
const GREEN = "\x1b[32m";
const YELLOW = "\x1b[33m";
const RED = "\x1b[31m";
const MAGENTA = "\x1b[35m";
const CYAN = "\x1b[36m";
const DIM = "\x1b[2m";

const SYMBOL: Record<ChangeAction, [string, string]> = {
  create: ["+", GREEN],
  update: ["~", YELLOW],
  delete: ["-", RED],
  replace: ["±", MAGENTA],
  import: ["←", CYAN],
  move: ["→", CYAN],
  forget: ["⊘", YELLOW],
  read: ["<=", CYAN],
  noop: [" ", DIM],
};

function marker(action: ChangeAction): string {
  const [sym, colour] = SYMBOL[action];
  return `${colour}${sym}${RESET}`;
}

/** Renders one machine-readable UI line as a human log line with ANSI colours, for a log pane. */
export function renderUiLine(line: UiMessage): string {
  switch (line.type) {
    case "planned_change":
      return `  ${marker(line.change.action)} ${line["@message"]}`;
    case "resource_drift":
      return `  ${YELLOW}!${RESET} ${line["@message"]}`;
    case "apply_start":
    case "apply_progress":
      return `${marker(line.hook.action)} ${line["@message"]}`;
    case "apply_complete":
      return `${marker(line.hook.action)} ${GREEN}${line["@message"]}${RESET}`;
    case "apply_errored":
      return `${RED}✗ ${line["@message"]}${RESET}`;
    case "refresh_start":
    case "refresh_complete":
      return `${DIM}${line["@message"]}${RESET}`;
    case "change_summary":
      return `${BOLD}${line["@message"]}${RESET}`;
    case "outputs": {
      const lines = Object.entries(line.outputs).map(([name, o]) => {
        if (o.action) return `  ${name}: ${o.action}${o.sensitive ? " (sensitive value)" : ""}`;
        return `  ${name} = ${o.sensitive ? "(sensitive value)" : JSON.stringify(o.value)}`;
      });
      return [`${BOLD}Outputs:${RESET}`, ...lines].join("\n");
    }
    case "diagnostic": {
      const d = line.diagnostic;
      const colour = d.severity === "error" ? RED : YELLOW;
      const where = d.range ? `\n  on ${d.range.filename} line ${d.range.start.line}` : "";
      return `${colour}${BOLD}${d.severity === "error" ? "Error" : "Warning"}:${RESET} ${BOLD}${d.summary}${RESET}${where}${d.detail ? `\n\n${d.detail}` : ""}`;
    }
    case "version":
      return `${DIM}${line["@message"]}${RESET}`;
    default:
      return line["@message"];
  }
}
