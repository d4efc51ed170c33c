"use client";
// Rotate a runner's token and revoke a runner, each behind a confirm dialog that says what happens to
// the jobs it runs; the rotated token is then shown once. The Runners list and a runner's page share these.
import { useState, type ReactNode } from "react";
import { useMutation } from "@tanstack/react-query";
import { Ban, RotateCcw } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { useDeleteDialog } from "./delete-dialog";
import type { RunnerView } from "./runner-ui";
import { RunnerTokenDialog, type ShownRunnerToken } from "./runner-token-dialog";

/** "its running job fails" / "its 3 running jobs fail". */
const jobsFail = (n: number) => (n === 1 ? "its running job fails" : `its ${n} running jobs fail`);
const failedWords = (ids: string[]) => (ids.length ? `; its running job${ids.length === 1 ? "" : "s"} ${ids.join(", ")} failed` : "");

export function useRunnerActions(): { rotate: (r: RunnerView) => void; revoke: (r: RunnerView) => void; dialogs: ReactNode } {
  const org = useOrg();
  const trpc = useTRPC();
  const [shown, setShown] = useState<ShownRunnerToken | null>(null);
  const refresh = [trpc.runners.list.queryKey(), trpc.runners.get.queryKey(), trpc.runners.getDefault.queryKey(), trpc.connections.runners.queryKey()];
  const rotate = useDeleteDialog({
    title: (r: RunnerView) => `Rotate the token of ${r.name}?`,
    description: (r: RunnerView) =>
      `The current token stops working at once, and so do the credentials of the jobs ${r.name} runs now: ${r.running ? jobsFail(r.running) : "it runs none"}. The new token is shown once; restart the runner with it.`,
    confirmLabel: "Rotate token",
    mutation: useMutation(trpc.runners.rotateToken.mutationOptions({ onSuccess: (res) => setShown({ runner: res.runner.name, token: res.token, failedJobs: res.failedJobs }) })),
    variables: (r: RunnerView) => ({ org: org.slug, runner: r.name }),
    refresh,
    done: (r, res) => `Rotated the token of ${r.name}${failedWords(res.failedJobs)}`,
  });
  const revoke = useDeleteDialog({
    title: (r: RunnerView) => `Revoke ${r.name}?`,
    description: (r: RunnerView) =>
      `${r.name} may claim no more work and its heartbeats are refused at once: ${r.running ? `${jobsFail(r.running)} with that reason` : "it runs no jobs now"}.${r.isDefault ? " It stops being the default runner; deploys return to a Planton-hosted runner." : ""}${r.connections.length ? ` Connections that name it (${r.connections.join(", ")}) must name another runner.` : ""} This cannot be undone.`,
    confirmLabel: "Revoke runner",
    mutation: useMutation(trpc.runners.revoke.mutationOptions()),
    variables: (r: RunnerView) => ({ org: org.slug, runner: r.name }),
    refresh,
    done: (r, res) => `Revoked ${r.name}${failedWords(res.failedJobs)}`,
  });
  return {
    rotate: rotate.ask,
    revoke: revoke.ask,
    dialogs: (
      <>
        {rotate.dialog}
        {revoke.dialog}
        <RunnerTokenDialog shown={shown} onClose={() => setShown(null)} />
      </>
    ),
  };
}

/** An admin's buttons for one of the organization's runners (icons in a table row, as the other settings lists have them); nothing for a hosted or revoked one. */
export function RunnerActionButtons({ runner, actions, size = "sm" }: { runner: RunnerView; actions: { rotate: (r: RunnerView) => void; revoke: (r: RunnerView) => void }; size?: "sm" | "md" }) {
  const org = useOrg();
  if (!org.can("admin") || runner.kind === "hosted" || runner.revokedAt) return null;
  return (
    <div className="flex flex-wrap justify-end gap-1">
      <Button variant={size === "sm" ? "ghost" : "secondary"} size={size} onClick={() => actions.rotate(runner)} aria-label={`Rotate the token of ${runner.name}`} title="Rotate token">
        <RotateCcw className="h-3.5 w-3.5" />
        {size === "md" && "Rotate token"}
      </Button>
      <Button variant={size === "sm" ? "ghost" : "secondary"} size={size} onClick={() => actions.revoke(runner)} aria-label={`Revoke ${runner.name}`} title="Revoke">
        <Ban className="h-3.5 w-3.5" />
        {size === "md" && "Revoke"}
      </Button>
    </div>
  );
}
