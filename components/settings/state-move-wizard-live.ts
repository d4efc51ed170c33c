// The organization's state move in the browser: read once from `stateMoves.current`, then kept
// up to date by the `stateMoves.watch` subscription (SSE, the job pages' transport), which answers
// the whole current move on every change, so every open page shows the same move without polling.
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

/** A subscription's value, whether or not the server sent it `tracked(id, value)`. */
function valueOf(data: unknown): CurrentMove {
  const d = data as { id?: unknown; data?: CurrentMove } & CurrentMove;
  return d && typeof d.id === "string" && d.data && "remainingOnPlanton" in d.data ? d.data : d;
}

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
        onData: (data) => {
          const next = valueOf(data);
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
    // currentKey is derived from org; re-subscribing on its identity would reconnect every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client, org, queryClient]);

  /** Puts a move a mutation answered in place at once (the watch confirms it a moment later). */
  const show = (move: StateMove, remainingOnPlanton?: number) =>
    queryClient.setQueryData(currentKey, (old: CurrentMove | undefined) => ({ move, remainingOnPlanton: remainingOnPlanton ?? old?.remainingOnPlanton ?? 0 }));

  return { current, stream, show };
}
