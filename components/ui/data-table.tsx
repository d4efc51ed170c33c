"use client";
import { useMemo, type ReactNode } from "react";
import { createColumnHelper, tableFeatures, useTable, type RowData } from "@tanstack/react-table";
import { cn } from "./cn";
import { QueryState } from "./page";

/** One column of a settings table: its heading, how a row fills its cell, and the cell's styling. */
export interface Column<T> {
  id: string;
  header: ReactNode;
  cell: (row: T) => ReactNode;
  /** Applied to the heading and every cell, e.g. `text-right` or a width. */
  className?: string;
  /** Applied to the cells only, e.g. the font of a name. */
  cellClassName?: string;
  /** The cell's tooltip: the full text of a cell that truncates. */
  title?: (row: T) => string | undefined;
  /** The heading's tooltip. */
  headerTitle?: string;
}

// No sorting, filtering or paging: every settings list is short and shown whole.
const features = tableFeatures({});

/** A table on @tanstack/react-table; `false` entries (columns a role may not see) are left out. */
export function DataTable<T extends RowData>({ label, columns, rows, rowKey, rowClassName }: { label: string; columns: (Column<T> | false)[]; rows: T[]; rowKey: (row: T) => string; rowClassName?: string }) {
  const shown = columns.filter((c): c is Column<T> => c !== false);
  const ids = shown.map((c) => c.id).join(" ");
  const byId = new Map(shown.map((c) => [c.id, c]));
  // The definitions change only when the set of columns does; the cells read the latest `byId`.
  const defs = useMemo(() => {
    const helper = createColumnHelper<typeof features, T>();
    return ids.split(" ").map((id) => helper.display({ id }));
  }, [ids]);
  const table = useTable({ features, columns: defs, data: rows, getRowId: (row) => rowKey(row) });

  return (
    <div className="overflow-x-auto">
      <table aria-label={label} className="min-w-full divide-y divide-slate-200 text-sm">
        <thead className="bg-slate-50">
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((h) => {
                const c = byId.get(h.id)!;
                return (
                  <th key={h.id} scope="col" title={c.headerTitle} className={cn("px-4 py-2.5 text-left text-xs font-semibold uppercase tracking-wide text-slate-500", c.className)}>
                    {c.header}
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        <tbody className="divide-y divide-slate-100 bg-white">
          {table.getRowModel().rows.map((row) => (
            <tr key={row.id} className={rowClassName}>
              {row.getAllCells().map((cell) => {
                const c = byId.get(cell.column.id)!;
                return (
                  <td key={cell.id} title={c.title?.(row.original)} className={cn("whitespace-nowrap px-4 py-3 text-slate-700", c.className, c.cellClassName)}>
                    {c.cell(row.original)}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A query's rows as a table: loading and error states from the query, `empty` when it has none. */
export function QueryTable<T extends RowData>({
  query,
  loading,
  empty,
  ...table
}: {
  query: { data: T[] | undefined; isPending: boolean; error: { message: string } | null; refetch: () => unknown };
  loading: string;
  empty: ReactNode;
  label: string;
  columns: (Column<T> | false)[];
  rowKey: (row: T) => string;
  rowClassName?: string;
}) {
  return (
    <QueryState query={query} loading={loading}>
      {(rows) => (rows.length === 0 ? empty : <DataTable rows={rows} {...table} />)}
    </QueryState>
  );
}
