"use client";
// The organization's default runner: where deploys of connections that name no runner run. An admin
// picks one of the organization's runners or returns to Planton-hosted ones; the server refuses a
// default while state is on Planton-managed storage, and that refusal is shown whole with the way to the move.
import { useState } from "react";
import Link from "next/link";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ArrowRight, Star } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { messageOf } from "@/components/ui/errors";
import { SelectField } from "@/components/ui/field";
import { Card, QueryState } from "@/components/ui/page";
import type { RunnerView } from "./runner-ui";
import { FormAlert } from "./shared";

interface Refusal {
  message: string;
  /** The refusal of a default while state is on Planton-managed storage: the move wizard fixes it. */
  stateLeft: boolean;
}

export function DefaultRunnerCard({ runners }: { runners: RunnerView[] | undefined }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const current = useQuery(trpc.runners.getDefault.queryOptions({ org: org.slug }));
  const admin = org.can("admin");
  const choices = (runners ?? []).filter((r) => r.kind === "self_hosted" && !r.revokedAt);
  const [chosen, setChosen] = useState("");
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const pick = chosen || choices.find((r) => !r.isDefault)?.name || "";

  const onSuccess = async (r: { runner: string | null; description: string }) => {
    queryClient.setQueryData(trpc.runners.getDefault.queryKey({ org: org.slug }), r);
    await Promise.all([trpc.runners.getDefault, trpc.runners.list, trpc.connections.runners].map((p) => queryClient.invalidateQueries({ queryKey: p.queryKey() })));
    setRefusal(null);
    setChosen("");
    toast.success(r.runner ? `${r.runner} is the default runner now` : "Deploys of connections that name no runner run on a Planton-hosted runner again");
  };
  const onError = (err: unknown) => setRefusal({ message: messageOf(err), stateLeft: (err as { data?: { code?: string } }).data?.code === "PRECONDITION_FAILED" });
  const setDefault = useMutation(trpc.runners.setDefault.mutationOptions({ onSuccess, onError }));
  const unsetDefault = useMutation(trpc.runners.unsetDefault.mutationOptions({ onSuccess, onError }));

  return (
    <Card title="Default runner" description="Runs deploys and live cloud operations of every connection that names no runner. A connection that names a runner always runs on it.">
      <QueryState query={current} loading="Loading the default runner…">
        {(d) => (
          <div className="space-y-3">
            <p data-testid="default-runner" className="flex items-center gap-2 text-sm text-slate-700">
              <Star className="h-4 w-4 shrink-0 text-amber-500" />
              <span>
                <span className="font-medium text-slate-900">{d.runner ?? "Planton-hosted"}</span>: {d.description}
              </span>
            </p>
            {admin && (
              <div className="flex flex-wrap items-end gap-2">
                {choices.length > 0 ? (
                  <>
                    <div className="w-72">
                      <SelectField label="Default runner" value={pick} onChange={(e) => setChosen(e.target.value)} disabled={setDefault.isPending}>
                        {choices.map((r) => (
                          <option key={r.id} value={r.name}>
                            {r.name}
                            {r.isDefault ? " (the default now)" : ""}
                          </option>
                        ))}
                      </SelectField>
                    </div>
                    <Button busy={setDefault.isPending} disabled={!pick || pick === d.runner} onClick={() => setDefault.mutate({ org: org.slug, runner: pick })}>
                      Make default
                    </Button>
                  </>
                ) : (
                  <p className="text-sm text-slate-500">Register a runner of your own to make it the default.</p>
                )}
                {d.runner && (
                  <Button variant="secondary" busy={unsetDefault.isPending} onClick={() => unsetDefault.mutate({ org: org.slug })}>
                    Use Planton-hosted runners
                  </Button>
                )}
              </div>
            )}
            {refusal && (
              <div className="space-y-2">
                <FormAlert message={refusal.message} />
                {refusal.stateLeft && (
                  <Link href={`/o/${org.slug}/settings/state-backends/move`} className="inline-flex items-center gap-1 text-sm font-medium text-indigo-600 hover:text-indigo-500">
                    Move off Planton-managed storage in Settings → State Backends <ArrowRight className="h-4 w-4" />
                  </Link>
                )}
              </div>
            )}
          </div>
        )}
      </QueryState>
    </Card>
  );
}
