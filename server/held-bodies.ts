// Bodies the console already holds, by the web Request or Response that carries them. The console's own
// HTTP server (server/direct-lane.ts) reads a runner's request body before its handler runs, and a JSON
// answer is made from a string; handing them on as a web Request or Response and reading them back through
// its stream cost more than storing a runner's batch of events (bench/jobs.ts, a console's CPU profile: a
// Request made with a body, its stream read back, and each answer's arrayBuffer(), about 5 % of the console's
// CPU while jobs run). Readers take the held bytes when there are any and the stream otherwise.
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
