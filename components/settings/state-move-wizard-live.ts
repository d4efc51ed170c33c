// The organization's state move in the browser: read once from `stateMoves.current`, then kept
// up to date by the `stateMoves.watch` subscription (SSE, the job pages' transport), which answers
// the current move (its counts and the items worth showing, see MOVE_ITEMS_SHOWN) as its steps commit,
// so every open page shows the same move without polling.
"use client";
import { useEffect, useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import type { z } from "zod";
import type { currentMoveSchema, dryRunSchema, stateMoveSchema } from "@/lib/api/state-schemas";
import { useTRPC, useTRPCClient } from "@/lib/trpc/client";
import type { StreamState } from "@/components/jobs/job-events";

export type CurrentMove = z.infer<typeof currentMoveSchema>;
export type StateMove = z.infer<typeof stateMoveSchema>;
export type StateMoveItem = StateMove["items"][number];
export type DryRun = z.infer<typeof dryRunSchema>;

/** The exact words the page says once every state has left Planton-managed storage. */
export const NOTHING_LEFT = "Nothing left on Planton-managed storage";

export function useCurrentStateMove(org: string) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const currentKey = trpc.stateMoves.current.queryKey({ org });
  const current = useQuery({ ...trpc.stateMoves.current.queryOptions({ org }), staleTime: Infinity });
  const [stream, setStream] = useState<StreamState>("connecting");

  useEffect(() => {
    let lastStatus: string | undefined;
    const sub = client.stateMoves.watch.subscribe(
      { org },
      {
        onStarted: () => setStream("live"),
        // Each value is the whole current view, so the newest one simply replaces what the page shows.
        onData: (next) => {
          // Never back to an older move: a value read just before a start committed may arrive after its answer.
          const shown = queryClient.getQueryData<CurrentMove>(currentKey)?.move;
          if (shown && (!next.move || new Date(next.move.createdAt).getTime() < new Date(shown.createdAt).getTime())) return;
          queryClient.setQueryData(currentKey, next);
          // A move that ends changes what is left on Planton-managed storage and what each backend serves.
          const status = next.move?.status;
          if (lastStatus === "running" && status !== "running") {
            void queryClient.invalidateQueries({ queryKey: trpc.stateBackends.plantonManaged.queryKey({ org }) });
            void queryClient.invalidateQueries({ queryKey: trpc.stateBackends.list.queryKey({ org }) });
          }
          lastStatus = status;
        },
        onConnectionStateChange: (s) => {
          if (s.state === "connecting" && s.error) setStream("reconnecting");
          else if (s.state === "pending") setStream("live");
        },
        onError: () => setStream("reconnecting"),
        onComplete: () => setStream("ended"),
      },
    );
    return () => sub.unsubscribe();
    // Not on currentKey: it is derived from org, and a new array each render would reconnect every time.
  }, [client, org, queryClient]);

  /**
   * Shows a move a mutation answered before the watch reports it. Only a move the page does not show yet:
   * for the one it shows, the watch's value may already be newer than the answer (a small move can end first).
   */
  const show = (move: StateMove) =>
    queryClient.setQueryData(currentKey, (old: CurrentMove | undefined) => (old?.move?.id === move.id ? old : { move, remainingOnPlanton: old?.remainingOnPlanton ?? null }));

  return { current, stream, show };
}
