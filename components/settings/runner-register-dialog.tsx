"use client";
// Registering a self-hosted runner: its name, how many jobs it runs at once, and its labels.
import { useState, type FormEvent } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { fieldErrorsOf, messageOf } from "@/components/ui/errors";
import { TextField } from "@/components/ui/field";
import { parseLabels } from "./runner-ui";
import type { ShownRunnerToken } from "./runner-token-dialog";
import { FormAlert } from "./shared";

export function RegisterRunnerDialog({ onClose, onRegistered }: { onClose: () => void; onRegistered: (shown: ShownRunnerToken) => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [capacity, setCapacity] = useState("2");
  const [labels, setLabels] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const register = useMutation(
    trpc.runners.register.mutationOptions({
      onSuccess: async (r) => {
        await queryClient.invalidateQueries({ queryKey: trpc.runners.list.queryKey() });
        await queryClient.invalidateQueries({ queryKey: trpc.connections.runners.queryKey() });
        onRegistered({ runner: r.runner.name, token: r.token });
      },
      onError: (err) => {
        const fe = fieldErrorsOf(err);
        setErrors(fe);
        setAlert(Object.keys(fe).length ? null : messageOf(err));
      },
    }),
  );

  function submit(e: FormEvent) {
    e.preventDefault();
    const local: Record<string, string> = {};
    // The name rule itself is the server's (lib/api/runner-schemas.ts); its refusal lands beside the field.
    if (!name.trim()) local.name = "Name the runner after where it runs, like prod-runner";
    const n = Number(capacity);
    if (!/^\d+$/.test(capacity) || n < 1 || n > 64) local.capacity = "Capacity must be a whole number of jobs from 1 to 64";
    const parsed = parseLabels(labels);
    if ("error" in parsed) local.labels = parsed.error;
    setErrors(local);
    setAlert(null);
    if (Object.keys(local).length || "error" in parsed) return;
    register.mutate({ org: org.slug, name: name.trim(), capacity: n, labels: parsed.labels });
  }

  return (
    <Dialog open onClose={onClose} title="Register a runner" description={`A runner of your own, inside your network, runs ${org.slug}'s jobs of the connections that name it (or every connection's, as the default runner).`}>
      <form onSubmit={submit} noValidate className="space-y-4">
        <TextField label="Name" value={name} onChange={(e) => setName(e.target.value.toLowerCase())} error={errors.name} placeholder="prod-runner" autoFocus />
        <TextField label="Capacity" inputMode="numeric" value={capacity} onChange={(e) => setCapacity(e.target.value)} error={errors.capacity} hint="How many jobs it runs at once." />
        <TextField label="Labels" value={labels} onChange={(e) => setLabels(e.target.value)} error={errors.labels} placeholder="region=eu, network=private" hint="Optional: key=value pairs, separated by commas." className="font-mono" />
        <FormAlert message={alert} />
        <div className="flex justify-end gap-2 pt-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" busy={register.isPending}>
            Register runner
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
