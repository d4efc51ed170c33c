"use client";
// The job page's route line: which runner the job runs on and the rule that chose it
// ("Runs on prod-runner: named by connection aws-prod"). Jobs made before routes were recorded have none.
import Link from "next/link";
import { Server } from "lucide-react";
import type { z } from "zod";
import type { jobRouteSchema } from "@/lib/api/schemas";
import { useOrg } from "@/components/shell/org-context";

export type JobRouteView = z.output<typeof jobRouteSchema>;

export function JobRouteLine({ route }: { route: JobRouteView | null | undefined }) {
  const org = useOrg();
  if (!route) return null;
  // The runner's name links to its page; the words are the server's (lib/runner-routing.ts routeSentence).
  const lead = route.runner ? `on ${route.runner}` : null;
  const linked = lead && route.sentence.startsWith(lead);
  return (
    <p data-testid="job-route" className="flex items-center gap-2 text-sm text-slate-700">
      <Server className="h-4 w-4 shrink-0 text-slate-400" aria-hidden />
      <span>
        Runs{" "}
        {linked ? (
          <>
            on{" "}
            <Link href={`/o/${org.slug}/settings/runners/${encodeURIComponent(route.runner!)}`} className="font-medium text-indigo-700 hover:underline">
              {route.runner}
            </Link>
            {route.sentence.slice(lead.length)}
          </>
        ) : (
          route.sentence
        )}
      </span>
    </p>
  );
}
