"use client";
// A runner's token, shown once (after register or rotate) with the exact command that starts it.
import Link from "next/link";
import { runnerStartCommand } from "@/lib/runner-routing";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { CopyField } from "./shared";

export interface ShownRunnerToken {
  runner: string;
  token: string;
  /** Set after a rotate: the jobs the runner was running, failed because their credentials stopped working. */
  failedJobs?: string[];
}

export function RunnerTokenDialog({ shown, onClose }: { shown: ShownRunnerToken | null; onClose: () => void }) {
  const org = useOrg();
  const rotated = shown?.failedJobs !== undefined;
  return (
    <Dialog
      open={!!shown}
      onClose={onClose}
      title={shown ? (rotated ? `New token for ${shown.runner}` : `Runner ${shown.runner} registered`) : ""}
      description="Copy the token now: it is shown only once and cannot be retrieved later. Planton keeps only a hash of it."
      footer={<Button onClick={onClose}>I have copied it</Button>}
    >
      {shown && (
        <>
          {rotated && (
            <p data-testid="rotate-failed-jobs" className="text-sm text-slate-700">
              The old token stopped working.{" "}
              {shown.failedJobs!.length === 0 ? (
                "It was running no jobs."
              ) : (
                <>
                  The jobs it was running failed:{" "}
                  {shown.failedJobs!.map((id, i) => (
                    <span key={id}>
                      {i > 0 && ", "}
                      <Link href={`/o/${org.slug}/jobs/${id}`} className="font-mono text-xs text-indigo-700 hover:underline">
                        {id}
                      </Link>
                    </span>
                  ))}
                  .
                </>
              )}{" "}
              Restart the runner with the new token.
            </p>
          )}
          <CopyField label="Runner token" value={shown.token} />
          {/* The page's own origin is the URL the runner reaches the console on, as the CLI's register prints it from the URL it used. */}
          <CopyField label="Start command" value={runnerStartCommand(window.location.origin, shown.token)} />
          <p className="text-xs text-slate-500">Run it on the machine that should run the jobs; the runner checks its token with the console before it says it started.</p>
        </>
      )}
    </Dialog>
  );
}
