"use client";
// The component's IaC module: what its next job runs and the rule that chooses it, and what its last
// job ran (from that job's preflight report and recorded bundle checksum).
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Card } from "@/components/ui/page";
import { Checksum, moduleHref } from "@/components/settings/module-ui";
import { JobRef, type ComponentView } from "./component-ui";

const RULE_WORDS = {
  custom: "pinned on this component",
  organization: "the latest in your organization's registry for its kind",
  platform: "the latest in the platform registry for its kind (your organization registers none)",
  none: "nothing is registered for its kind",
} as const;

/** `name@version` → the module version's page. */
function ModuleLink({ value: r }: { value: string }) {
  const org = useOrg();
  const at = r.lastIndexOf("@");
  if (at <= 0) return <span className="font-mono text-xs">{r}</span>;
  return (
    <Link href={moduleHref(org.slug, r.slice(0, at), r.slice(at + 1))} className="font-mono text-xs font-medium text-indigo-700 hover:underline">
      {r}
    </Link>
  );
}

export function ComponentModuleCard({ component: c }: { component: ComponentView }) {
  const org = useOrg();
  const trpc = useTRPC();
  const m = c.module;
  const last = useQuery({ ...trpc.jobs.get.queryOptions({ org: org.slug, id: c.lastJob?.id ?? "" }), enabled: !!c.lastJob });
  const check = last.data?.preflight.checks.find((x) => x.essential === "module");
  return (
    <Card title="IaC module">
      <div className="space-y-4 text-sm" data-testid="component-module">
        <div>
          <div className="text-xs font-medium uppercase tracking-wide text-slate-500">Next job runs</div>
          <div className="mt-1">{m.resolved ? <ModuleLink value={m.resolved} /> : <span className="text-rose-700">no module</span>}</div>
          <p className="mt-0.5 text-xs text-slate-600" data-testid="module-rule">
            Chosen by rule: {RULE_WORDS[m.rule]}.
          </p>
          {m.sha256 && (
            <div className="mt-1">
              <Checksum sha={m.sha256} label="bundle SHA-256" />
            </div>
          )}
        </div>
        {c.lastJob && (
          <div className="border-t border-slate-100 pt-3">
            <div className="text-xs font-medium uppercase tracking-wide text-slate-500">Last job ran</div>
            <div className="mt-1">
              <JobRef job={c.lastJob} />
            </div>
            {last.isPending ? (
              <p className="mt-1 text-xs text-slate-500">Loading its preflight…</p>
            ) : last.error ? (
              <p className="mt-1 text-xs text-rose-700">Its preflight could not be read: {last.error.message}</p>
            ) : check?.resolvedTo ? (
              <>
                <p className="mt-1 break-words font-mono text-xs text-slate-700" data-testid="last-job-module">
                  {check.resolvedTo}
                </p>
                {last.data?.moduleSha256 && (
                  <div className="mt-1">
                    <Checksum sha={last.data.moduleSha256} label="the last job's bundle SHA-256" />
                  </div>
                )}
              </>
            ) : (
              <p className="mt-1 text-xs text-rose-700">{check?.errors[0] ?? "No module was resolved."}</p>
            )}
          </div>
        )}
      </div>
    </Card>
  );
}
