// The audit record as a file, one rule for the server's streamed export and the CLI's `--output csv`:
// the CSV columns (AUDIT_CSV_COLUMNS), their quoting, and the guard that keeps a spreadsheet from
// running a cell as a formula.
import { AUDIT_CSV_COLUMNS, type AuditEventView } from "./api/audit-schemas";

export const AUDIT_EXPORT_FORMATS = ["csv", "json"] as const;
export type AuditExportFormat = (typeof AUDIT_EXPORT_FORMATS)[number];

/** One CSV cell: quoted when it holds a comma, quote or line break; a leading = + - @ (or tab, CR) gets a ' so no spreadsheet evaluates it. */
export function csvCell(value: unknown): string {
  let s = value === null || value === undefined ? "" : typeof value === "string" ? value : value instanceof Date ? value.toISOString() : typeof value === "object" ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export const auditCsvHeader = (): string => `${AUDIT_CSV_COLUMNS.join(",")}\r\n`;

/** One event as a CSV line (CRLF-terminated, as RFC 4180 has it); `changes` is its JSON text. */
export const auditCsvLine = (e: Omit<Pick<AuditEventView, (typeof AUDIT_CSV_COLUMNS)[number]>, "at"> & { at: Date | string }): string => `${AUDIT_CSV_COLUMNS.map((c) => csvCell(e[c])).join(",")}\r\n`;

/** `audit-acme-2026-12-01.csv`: the download's name. */
export const auditExportFileName = (org: string, format: AuditExportFormat, at = new Date()): string => `audit-${org.replace(/[^\w.-]/g, "_")}-${at.toISOString().slice(0, 10)}.${format}`;
