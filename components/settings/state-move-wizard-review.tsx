"use client";
// Step 2: the dry run as a table: exactly what would move, from which key to which, and nothing changed yet.
import { ArrowLeft, Play } from "lucide-react";
import { formatBytes } from "@/lib/display";
import { Badge, envTone } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Card, EmptyState } from "@/components/ui/page";
import { Table, Tbody, Td, Th } from "@/components/ui/table";
import { FormAlert } from "./shared";
import type { DryRun } from "./state-move-wizard-live";

/** A backend and a key in it; long keys (Planton-managed ones hold two ids) wrap inside the cell. */
export function KeyCell({ backend, stateKey }: { backend: string; stateKey: string }) {
  return (
    <Td className="min-w-48 max-w-sm whitespace-normal!" title={`${backend}: ${stateKey}`}>
      <span className="block text-xs font-medium text-slate-500">{backend}</span>
      <span className="block font-mono text-xs break-all text-slate-700">{stateKey}</span>
    </Td>
  );
}

export function ReviewStep({ dryRun, admin, busy, error, onBack, onStart }: { dryRun: DryRun; admin: boolean; busy: boolean; error: string | null; onBack: () => void; onStart: () => void }) {
  const { items, totals } = dryRun;
  return (
    <Card
      flush
      title="2. Review the dry run"
      description="Nothing has changed yet. Starting the move copies each state below, reads it back and compares checksums before the component switches to its new backend."
    >
      {/* Above the table: with hundreds of rows, the start and its refusal stay in view. */}
      {(admin || error) && (
        <div className="space-y-3 border-b border-slate-100 px-5 py-4">
          <FormAlert message={error} />
          {admin && (
            <div className="flex justify-between gap-2">
              <Button variant="secondary" onClick={onBack} disabled={busy}>
                <ArrowLeft className="h-4 w-4" /> Change destinations
              </Button>
              <Button onClick={onStart} busy={busy} disabled={items.length === 0}>
                <Play className="h-4 w-4" /> Start the move ({totals.count} state{totals.count === 1 ? "" : "s"})
              </Button>
            </div>
          )}
        </div>
      )}
      {items.length === 0 ? (
        <EmptyState title="Nothing would move" description="No state is left on Planton-managed storage for these provisioners." />
      ) : (
        <Table label="Dry run">
          <thead className="bg-slate-50">
            <tr>
              <Th>Component</Th>
              <Th>Environment</Th>
              <Th>Provisioner</Th>
              <Th>From key</Th>
              <Th>To key</Th>
              <Th className="text-right">Size</Th>
              <Th className="text-right">Serial</Th>
            </tr>
          </thead>
          <Tbody>
            {items.map((i) => (
              <tr key={i.componentId} data-testid="dry-run-item">
                <Td className="font-medium text-slate-900">{i.component}</Td>
                <Td>
                  <Badge tone={envTone(i.environment)}>{i.environment}</Badge>
                </Td>
                <Td>{i.provisioner}</Td>
                <KeyCell backend={i.from} stateKey={i.fromKey} />
                <KeyCell backend={i.to} stateKey={i.toKey} />
                <Td className="text-right tabular-nums">{formatBytes(i.size)}</Td>
                <Td className="text-right tabular-nums">{i.serial ?? "–"}</Td>
              </tr>
            ))}
          </Tbody>
          <tfoot className="border-t border-slate-200 bg-slate-50 text-sm font-medium text-slate-800">
            <tr>
              <Td colSpan={5} data-testid="dry-run-totals">
                Total: {totals.count} state{totals.count === 1 ? "" : "s"}
                {totals.count > items.length && <span className="font-normal text-slate-500"> (the first {items.length} shown; planton infra state-backend move-off-planton --dry-run lists every one)</span>}
              </Td>
              <Td className="text-right tabular-nums">{formatBytes(totals.size)}</Td>
              <Td />
            </tr>
          </tfoot>
        </Table>
      )}
    </Card>
  );
}
