/** Structured log lines (one JSON object a line) on stderr; never pass secret values here. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export function createLogger(base: LogFields = {}, write: (line: string) => void = (l) => process.stderr.write(l + "\n")): Logger {
  const out = (level: string, msg: string, fields?: LogFields) =>
    write(JSON.stringify({ ts: new Date().toISOString(), level, msg, ...base, ...fields }));
  return {
    info: (m, f) => out("info", m, f),
    warn: (m, f) => out("warn", m, f),
    error: (m, f) => out("error", m, f),
    child: (f) => createLogger({ ...base, ...f }, write),
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, child: () => silentLogger };
