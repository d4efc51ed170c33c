"use client";
import { CheckCircle2, XCircle } from "lucide-react";
import { ESSENTIAL_LABEL, type PreflightReport } from "@/lib/preflight";
import { cn } from "@/components/ui/cn";

/** The four essentials plus the connection's authorization and the spec's secrets for the environment, each passed or failed with what it resolved to. */
export function PreflightChecks({ report, showVisited = false }: { report: PreflightReport; showVisited?: boolean }) {
  const cred = report.checks.find((c) => c.essential === "credentials");
  const authErrors = cred?.errors.filter((e) => e.startsWith("Nothing ran: environment")) ?? [];
  const rows = [
    ...report.checks.map((c) => ({ key: c.essential, label: ESSENTIAL_LABEL[c.essential] ?? c.essential, passed: c.passed, resolvedTo: c.resolvedTo, errors: c.errors.filter((e) => !authErrors.includes(e)), visited: c.visited })),
  ];
  if (cred) {
    const known = !!cred.resolvedTo;
    rows.splice(2, 0, {
      key: "authorization" as never,
      label: "Connection authorization",
      passed: known && !authErrors.length,
      resolvedTo: known ? (authErrors.length ? "not authorized for this environment" : "authorized for this environment") : null,
      errors: authErrors,
      visited: [],
    });
    const credRow = rows.find((r) => r.key === "credentials");
    if (credRow && authErrors.length && !credRow.errors.length) credRow.passed = true;
  }
  return (
    <ul className="divide-y divide-slate-100 rounded-md ring-1 ring-slate-200" aria-label="Preflight checks">
      {rows.map((r) => (
        <li key={r.key} className={cn("flex items-start gap-3 px-3 py-2.5 text-sm", !r.passed && "bg-rose-50/60")} data-essential={r.key} data-passed={r.passed}>
          {r.passed ? <CheckCircle2 className="mt-0.5 h-4 w-4 shrink-0 text-emerald-600" aria-label="passed" /> : <XCircle className="mt-0.5 h-4 w-4 shrink-0 text-rose-600" aria-label="failed" />}
          <div className="min-w-0 flex-1">
            <div className="flex flex-wrap items-baseline justify-between gap-x-3">
              <span className="font-medium text-slate-800">{r.label}</span>
              <span className={cn("text-xs", r.resolvedTo ? "font-mono text-slate-600" : "text-rose-700")}>{r.resolvedTo ?? "not resolved"}</span>
            </div>
            {r.errors.map((e) => (
              <p key={e} className="mt-1 text-xs text-rose-700">
                {e}
              </p>
            ))}
            {showVisited && r.visited.length > 0 && (
              <ol className="mt-1 list-inside list-disc text-xs text-slate-500">
                {r.visited.map((v) => (
                  <li key={v}>{v}</li>
                ))}
              </ol>
            )}
          </div>
        </li>
      ))}
    </ul>
  );
}
