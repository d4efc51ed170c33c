// The typed tRPC client a script would use, over real HTTP with an API token (and SSE for streams).
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { EventSource } from "eventsource";
import superjson from "superjson";
import type { AppRouter } from "../server/trpc/root";
import { TRPC_MAX_BATCH_CALLS } from "../lib/trpc/limits";

export function apiClient(url: string, token: string) {
  const authFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${token}` } });
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({
          url: `${url}/api/trpc`,
          transformer: superjson,
          EventSource: class extends EventSource {
            constructor(u: string | URL, init?: Record<string, unknown>) {
              super(u, { ...init, fetch: authFetch });
            }
          } as unknown as typeof globalThis.EventSource,
        }),
        false: httpBatchLink({ url: `${url}/api/trpc`, transformer: superjson, maxItems: TRPC_MAX_BATCH_CALLS, headers: { authorization: `Bearer ${token}` } }),
      }),
    ],
  });
}

export type ApiClient = ReturnType<typeof apiClient>;
