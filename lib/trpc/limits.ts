// How much one tRPC request may carry: the console's client batches at most this many calls, and the
// server refuses a larger batch or body before it runs anything (server/web-edge.ts).

/** Calls in one batched request. */
export const TRPC_MAX_BATCH_CALLS = 20;

/** Bytes in one request body (a batch of mutations included). */
export const TRPC_MAX_BODY_BYTES = 1024 * 1024;
