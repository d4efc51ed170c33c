// Bodies the console already holds, by the web Request or Response that carries them. The console's own
// HTTP server (server/direct-lane.ts) reads a runner's request body before its handler runs, and a JSON
// answer is made from a string; handing them on as a web Request or Response and reading them back through
// its stream was about 5 % of the console's CPU while jobs ran (a CPU profile of bench/jobs.ts: the Request
// made with a body, its stream read back, each answer's arrayBuffer()). Readers (input-guard, the direct
// lane) take the held copy when there is one and the stream otherwise; a Request the direct lane makes
// carries no body of its own, so its body is read through input-guard only.
const held = new WeakMap<Request | Response, Buffer | string>();

/** Records the body `message` carries (it was made with, or without, that body). */
export function holdBody<T extends Request | Response>(message: T, body: Buffer | string): T {
  held.set(message, body);
  return message;
}

/** The body recorded for `message`, if any. */
export function heldBody(message: Request | Response): Buffer | string | undefined {
  return held.get(message);
}
