"use client";
// Settings → Runners: the organization's runners and the Planton-hosted ones that serve it, with
// their status, engines and load, the default runner, and (for admins) register, rotate and revoke.
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { Plus, Server } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { QueryTable } from "@/components/ui/data-table";
import { Card, EmptyState, PageHeader } from "@/components/ui/page";
import { useRunnerActions } from "./runner-actions";
import { DefaultRunnerCard } from "./runner-default-card";
import { RegisterRunnerDialog } from "./runner-register-dialog";
import { RunnerTokenDialog, type ShownRunnerToken } from "./runner-token-dialog";
import { RUNNER_REFRESH_MS } from "./runner-ui";
import { runnerColumns } from "./runners-table";
import { RoleNote } from "./shared";

export function RunnersPage() {
  const org = useOrg();
  const trpc = useTRPC();
  // Status is time-based and nothing pushes it: refetched on an interval (see RUNNER_REFRESH_MS).
  const list = useQuery({ ...trpc.runners.list.queryOptions({ org: org.slug }), refetchInterval: RUNNER_REFRESH_MS });
  const [registering, setRegistering] = useState(false);
  const [registered, setRegistered] = useState<ShownRunnerToken | null>(null);
  const actions = useRunnerActions();
  const admin = org.can("admin");

  return (
    <>
      <PageHeader
        title="Runners"
        description="The processes that run your jobs. Planton-hosted runners take the work until a connection or the organization names a runner of your own."
        actions={
          admin && (
            <Button onClick={() => setRegistering(true)}>
              <Plus className="h-4 w-4" /> Register runner
            </Button>
          )
        }
      />
      <RoleNote need="admin" what="Registering, rotating and revoking runners and choosing the default runner" />
      <div className="space-y-6">
        <DefaultRunnerCard runners={list.data?.runners} />
        <Card flush title={`Runners that serve ${org.name}`} description="Its own runners (revoked ones stay for their history) and the Planton-hosted ones.">
          <QueryTable
            query={{ ...list, data: list.data?.runners }}
            loading="Loading runners…"
            empty={
              <EmptyState
                icon={<Server className="h-8 w-8" />}
                title="No runners"
                description="No runner serves this organization yet. Register one of your own, or start the console with Planton-hosted runners (PLANTON_HOSTED_RUNNERS)."
                action={admin ? <Button onClick={() => setRegistering(true)}>Register a runner</Button> : undefined}
              />
            }
            label="Runners"
            rowKey={(r) => r.id}
            rowClassName="align-top"
            columns={runnerColumns(org.slug, admin, actions, list.dataUpdatedAt)}
          />
        </Card>
      </div>
      {registering && (
        <RegisterRunnerDialog
          onClose={() => setRegistering(false)}
          onRegistered={(shown) => {
            setRegistering(false);
            setRegistered(shown);
          }}
        />
      )}
      <RunnerTokenDialog shown={registered} onClose={() => setRegistered(null)} />
      {actions.dialogs}
    </>
  );
}
