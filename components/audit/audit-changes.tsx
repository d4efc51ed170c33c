"use client";
import { Table, Tbody, Td, Th } from "@/components/ui/table";

type FromTo = { from: unknown; to: unknown };
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isFromTo = (v: unknown): v is FromTo => isRecord(v) && "from" in v && "to" in v && Object.keys(v).length === 2;

/** Flattens a changes record into rows: `{ spec: { title: { from, to } } }` becomes spec.title from → to. */
function rowsOf(changes: Record<string, unknown>, prefix = ""): { field: string; diff?: FromTo; value?: unknown }[] {
  return Object.entries(changes).flatMap(([k, v]) => {
    const field = prefix + k;
    if (isFromTo(v)) return [{ field, diff: v }];
    if (isRecord(v) && Object.keys(v).length && Object.values(v).every(isFromTo)) return rowsOf(v, `${field}.`);
    return [{ field, value: v }];
  });
}

const show = (v: unknown) => (v === undefined ? "—" : typeof v === "string" ? v : JSON.stringify(v));

/** An event's changes, readably: field-level from → to where it is a diff, the value otherwise. */
export function AuditChanges({ changes }: { changes: unknown }) {
  if (changes === null || changes === undefined) return <p className="text-sm text-slate-500">None recorded.</p>;
  if (!isRecord(changes)) return <pre className="overflow-auto rounded bg-slate-50 p-2 font-mono text-xs">{JSON.stringify(changes, null, 2)}</pre>;
  const rows = rowsOf(changes);
  if (!rows.length) return <p className="text-sm text-slate-500">None recorded.</p>;
  const diffs = rows.some((r) => r.diff);
  return (
    <div className="overflow-hidden rounded ring-1 ring-slate-200">
      <Table label="Changes">
        <thead className="bg-slate-50">
          <tr>
            <Th>Field</Th>
            <Th>{diffs ? "From" : "Value"}</Th>
            {diffs && <Th>To</Th>}
          </tr>
        </thead>
        <Tbody>
          {rows.map((r) => (
            <tr key={r.field} data-field={r.field}>
              <Td className="font-mono text-xs text-slate-600">{r.field}</Td>
              {r.diff ? (
                <>
                  <Td className="whitespace-normal! break-all font-mono text-xs text-rose-700">{show(r.diff.from)}</Td>
                  <Td className="whitespace-normal! break-all font-mono text-xs text-emerald-700">{show(r.diff.to)}</Td>
                </>
              ) : (
                <Td colSpan={diffs ? 2 : 1} className="whitespace-normal! break-all font-mono text-xs text-slate-800">
                  {show(r.value)}
                </Td>
              )}
            </tr>
          ))}
        </Tbody>
      </Table>
    </div>
  );
}
