"use client";
// Step 1: a destination per provisioner that has states on Planton-managed storage, chosen from the
// organization's backends that serve it; choosing one runs its access test (write, read back, compare, delete).
import { useEffect, useRef, useState } from "react";
import Link from "next/link";
import { AlertTriangle, ArrowRight, CheckCircle2, Circle, XCircle } from "lucide-react";
import type { z } from "zod";
import type { accessCheckSchema, plantonManagedUsageSchema, stateBackendListSchema } from "@/lib/api/state-schemas";
import { formatBytes } from "@/lib/display";
import { PLANTON_MANAGED_KIND, STATE_BACKEND_KINDS, isStateBackendKind } from "@/lib/state-backend-kinds";
import { useTRPCClient } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { messageOf } from "@/components/ui/errors";
import { SelectField } from "@/components/ui/field";
import { Card } from "@/components/ui/page";
import { Spinner } from "@/components/ui/spinner";
import { FormAlert } from "./shared";

type Usage = z.infer<typeof plantonManagedUsageSchema>;
type BackendList = z.infer<typeof stateBackendListSchema>;
type AccessCheck = z.infer<typeof accessCheckSchema>;
type CheckState = { state: "running" } | { state: "done"; check: AccessCheck } | { state: "error"; message: string };

const STEP_LABEL: Record<AccessCheck["steps"][number]["step"], string> = {
  open: "Open the backend with its connection's credentials",
  write: "Write a probe object",
  read: "Read it back",
  compare: "Compare what was read with what was written",
  delete: "Delete the probe object",
};

function kindTitle(kind: string) {
  return isStateBackendKind(kind) ? STATE_BACKEND_KINDS[kind].title : kind;
}

/** The backends that can keep `provisioner`'s states (Planton-managed is where they come from). */
export function destinationsFor(backends: BackendList, provisioner: string) {
  return backends.backends.filter((b) => b.kind !== PLANTON_MANAGED_KIND && isStateBackendKind(b.kind) && (STATE_BACKEND_KINDS[b.kind].provisioners as readonly string[]).includes(provisioner));
}

export function DestinationsStep({
  usage,
  backends,
  to,
  setTo,
  admin,
  busy,
  error,
  onReview,
  onCancel,
}: {
  usage: Usage;
  backends: BackendList;
  to: Record<string, string>;
  setTo: (next: Record<string, string>) => void;
  admin: boolean;
  busy: boolean;
  error: string | null;
  onReview: () => void;
  onCancel?: () => void;
}) {
  const org = useOrg();
  const client = useTRPCClient();
  const [checks, setChecks] = useState<Record<string, CheckState>>({});
  const started = useRef(new Set<string>());

  const provisioners = usage.byProvisioner.map((p) => p.provisioner);
  const statsOf = (p: string) => usage.byProvisioner.find((s) => s.provisioner === p) ?? { count: 0, size: 0 };

  async function runCheck(name: string) {
    started.current.add(name);
    setChecks((c) => ({ ...c, [name]: { state: "running" } }));
    try {
      const check = await client.stateBackends.testAccess.mutate({ org: org.slug, name });
      setChecks((c) => ({ ...c, [name]: { state: "done", check } }));
    } catch (err) {
      setChecks((c) => ({ ...c, [name]: { state: "error", message: messageOf(err) } }));
    }
  }

  // The organization's default for a provisioner is the first choice, when it can take the states.
  useEffect(() => {
    const next = { ...to };
    let changed = false;
    for (const p of provisioners) {
      if (next[p]) continue;
      const preferred = backends.defaults[p];
      if (preferred && destinationsFor(backends, p).some((b) => b.name === preferred)) {
        next[p] = preferred;
        changed = true;
      }
    }
    if (changed) setTo(next);
    // Once per list of provisioners and backends, not on every choice (an admin's "none" stays none).
  }, [provisioners.join(","), backends]);

  // Every chosen backend gets its access test once (a backend chosen for two provisioners is tested once).
  useEffect(() => {
    if (!admin) return;
    for (const p of provisioners) {
      const name = to[p];
      if (name && !started.current.has(name)) void runCheck(name);
    }
  }, [admin, to]);

  const ready = provisioners.length > 0 && provisioners.every((p) => {
    const c = to[p] ? checks[to[p]] : undefined;
    return c?.state === "done" && c.check.ok;
  });

  return (
    <Card
      title="1. Choose a destination per provisioner"
      description={`${usage.totals.count} state${usage.totals.count === 1 ? "" : "s"} (${formatBytes(usage.totals.size)}) on Planton-managed storage, by the provisioner that reads them. Each destination's access is tested when you choose it.`}
    >
      <div className="space-y-5">
        {provisioners.map((p) => {
          const options = destinationsFor(backends, p);
          const stats = statsOf(p);
          const chosen = to[p] ?? "";
          const check = chosen ? checks[chosen] : undefined;
          return (
            <fieldset key={p} className="rounded-md border border-slate-200 p-4" data-testid={`destination-${p}`}>
              <legend className="px-1 text-sm font-semibold text-slate-900">
                {p} <span className="font-normal text-slate-500">· {stats.count} state{stats.count === 1 ? "" : "s"}, {formatBytes(stats.size)}</span>
              </legend>
              {options.length === 0 ? (
                <p className="flex items-start gap-2 text-sm text-amber-800">
                  <AlertTriangle className="mt-0.5 h-4 w-4 shrink-0" />
                  <span>
                    No backend of {org.slug} can keep {p} states, so they cannot move yet. Create one in{" "}
                    <Link href={`/o/${org.slug}/settings/state-backends`} className="font-medium underline">
                      Settings → State Backends
                    </Link>{" "}
                    (kinds that serve {p}: {Object.values(STATE_BACKEND_KINDS).filter((k) => k.creatable && (k.provisioners as readonly string[]).includes(p)).map((k) => k.title).join(", ")}).
                  </span>
                </p>
              ) : (
                <div className="grid gap-4 md:grid-cols-2">
                  <SelectField
                    label={`Destination for ${p} states`}
                    value={chosen}
                    disabled={!admin || busy}
                    onChange={(e) => {
                      const name = e.target.value;
                      const next = { ...to };
                      if (name) next[p] = name;
                      else delete next[p];
                      setTo(next);
                      // Choosing a backend again tests it again: its access may have changed meanwhile.
                      if (name && admin) void runCheck(name);
                    }}
                    hint={admin ? undefined : "Only an admin chooses destinations."}
                  >
                    <option value="">Choose a backend…</option>
                    {options.map((b) => (
                      <option key={b.id} value={b.name}>
                        {b.name} ({kindTitle(b.kind)}{b.defaultFor.includes(p) ? ", default" : ""})
                      </option>
                    ))}
                  </SelectField>
                  <div aria-live="polite">{chosen && admin && <AccessResult name={chosen} check={check} retry={() => void runCheck(chosen)} />}</div>
                </div>
              )}
            </fieldset>
          );
        })}
        <FormAlert message={error} />
        {admin && (
          <div className="flex justify-end gap-2">
            {onCancel && (
              <Button variant="secondary" onClick={onCancel}>
                Back to the last move
              </Button>
            )}
            <Button onClick={onReview} disabled={!ready} busy={busy}>
              Review the dry run <ArrowRight className="h-4 w-4" />
            </Button>
          </div>
        )}
      </div>
    </Card>
  );
}

function AccessResult({ name, check, retry }: { name: string; check: CheckState | undefined; retry: () => void }) {
  if (!check || check.state === "running") {
    return (
      <p role="status" className="flex items-center gap-2 pt-7 text-sm text-slate-500">
        <Spinner /> Testing access to {name}…
      </p>
    );
  }
  if (check.state === "error") {
    return (
      <div className="space-y-2 pt-6" data-testid="access-test">
        <FormAlert message={check.message} />
        <Button variant="secondary" size="sm" onClick={retry}>
          Test again
        </Button>
      </div>
    );
  }
  const { ok, steps, error } = check.check;
  return (
    <div className="space-y-2" data-testid="access-test">
      <p className="text-sm font-medium text-slate-800">
        Access test {ok ? <Badge tone="green">passed</Badge> : <Badge tone="red">failed</Badge>}
      </p>
      <ul className="space-y-1 text-sm">
        {steps.map((s) => (
          <li key={s.step} className="flex items-start gap-2">
            {s.ok ? <CheckCircle2 aria-label="passed" className="mt-0.5 h-4 w-4 shrink-0 text-emerald-600" /> : <XCircle aria-label="failed" className="mt-0.5 h-4 w-4 shrink-0 text-rose-600" />}
            <span>
              <span className="text-slate-800">{STEP_LABEL[s.step]}</span>
              {s.detail && <span className="block text-xs break-all text-slate-500">{s.detail}</span>}
            </span>
          </li>
        ))}
        {/* The steps after a failure did not run: shown as not reached, so the list reads as the whole test. */}
        {!ok &&
          (Object.keys(STEP_LABEL) as (keyof typeof STEP_LABEL)[])
            .filter((k) => !steps.some((s) => s.step === k))
            .map((k) => (
              <li key={k} className="flex items-start gap-2 text-slate-400">
                <Circle className="mt-0.5 h-4 w-4 shrink-0" /> {STEP_LABEL[k]} (not reached)
              </li>
            ))}
      </ul>
      {!ok && (
        <>
          <FormAlert message={error ?? `The access test of ${name} failed.`} />
          <Button variant="secondary" size="sm" onClick={retry}>
            Test again
          </Button>
        </>
      )}
    </div>
  );
}
