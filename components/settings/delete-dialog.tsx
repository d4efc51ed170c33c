"use client";
import { useState, type ReactNode } from "react";
import { useQueryClient, type QueryKey } from "@tanstack/react-query";
import { toast } from "sonner";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { messageOf } from "@/components/ui/errors";
import { FormAlert } from "./shared";

/** What the dialog needs of a delete mutation: it runs it, shows it busy, and shows its refusal. */
export interface DeleteMutation<V, R = unknown> {
  mutate: (variables: V, options: { onSuccess: (result: R) => unknown }) => void;
  isPending: boolean;
  error: unknown;
  reset: () => void;
}

/**
 * The confirm dialog every settings list deletes (removes, revokes) through. `ask(target)` opens it
 * naming the target; confirming runs the mutation, shows it busy, and on success refreshes `refresh`,
 * toasts `done` and closes; a refusal stays in the dialog until it is closed. The dialog is a native
 * modal: Tab moves between Cancel and the confirm button (Cancel has focus first), Escape closes it.
 */
export function useDeleteDialog<T, V, R = unknown>(opts: {
  title: (target: T) => string;
  description: ReactNode | ((target: T) => ReactNode);
  confirmLabel: string;
  /** One mutation, or the one this target needs (one's own token, or any member's). */
  mutation: DeleteMutation<V, R> | ((target: T) => DeleteMutation<V, R>);
  variables: (target: T) => V;
  refresh: QueryKey[];
  /** The toast; `result` is what the mutation answered (a revoke's failed jobs). */
  done: (target: T, result: R) => string;
}): { ask: (target: T) => void; dialog: ReactNode } {
  const queryClient = useQueryClient();
  const [target, setTarget] = useState<T | null>(null);
  const mutation = target === null ? null : typeof opts.mutation === "function" ? opts.mutation(target) : opts.mutation;
  // Closing clears the refusal, so the next open starts clean.
  const close = () => {
    mutation?.reset();
    setTarget(null);
  };
  const confirm = () => {
    if (target === null || !mutation) return;
    mutation.mutate(opts.variables(target), {
      onSuccess: async (result) => {
        await Promise.all(opts.refresh.map((queryKey) => queryClient.invalidateQueries({ queryKey })));
        toast.success(opts.done(target, result));
        setTarget(null);
      },
    });
  };
  const dialog = (
    <Dialog
      open={target !== null}
      onClose={close}
      title={target === null ? "" : opts.title(target)}
      description={target === null ? undefined : typeof opts.description === "function" ? opts.description(target) : opts.description}
      footer={
        <>
          <Button variant="secondary" onClick={close} data-autofocus>
            Cancel
          </Button>
          <Button variant="danger" busy={mutation?.isPending} onClick={confirm}>
            {opts.confirmLabel}
          </Button>
        </>
      }
    >
      {mutation?.error ? <FormAlert message={messageOf(mutation.error)} /> : null}
    </Dialog>
  );
  return { ask: setTarget, dialog };
}
