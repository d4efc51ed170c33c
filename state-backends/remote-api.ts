// What the remote kinds (GCS, HCP Terraform, Pulumi Cloud) share: one way to call a JSON API with
// `fetch`, and one way to turn a refusal into a single sentence that names the service, what was not
// done, the service's own reason and the fix. No credential ever goes into a message.

/** A call to a remote state service failed; the message is the one sentence a user sees. */
export class RemoteStateError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "RemoteStateError";
  }
}

export type Fetch = typeof fetch;

/** The service's own reason from an error body, in the shapes these APIs answer (GCS, JSON:API, Pulumi), or "". */
export function serviceReason(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body.trim().slice(0, 200);
  }
  const p = parsed as { error?: { message?: unknown } | string; errors?: { detail?: unknown; title?: unknown }[]; message?: unknown; error_description?: unknown };
  const first = Array.isArray(p.errors) ? p.errors[0] : undefined;
  const reason =
    (typeof p.error === "object" && typeof p.error?.message === "string" && p.error.message) ||
    (typeof p.error_description === "string" && p.error_description) ||
    (first && typeof first.detail === "string" && first.detail) ||
    (first && typeof first.title === "string" && first.title) ||
    (typeof p.message === "string" && p.message) ||
    (typeof p.error === "string" && p.error) ||
    "";
  return String(reason).slice(0, 200);
}

/** A refusal as one sentence: `<service> refused to <action> (<status>: <reason>). <fix>` */
export function refusal(service: string, action: string, status: number, body: string, fix: string): RemoteStateError {
  const reason = serviceReason(body).replace(/[.\s]+$/, "");
  return new RemoteStateError(`${service} refused to ${action} (HTTP ${status}${reason ? `: ${reason}` : ""}). ${fix}`, status);
}

/** The usual fix for a status, when the kind has nothing more precise to say. */
export function fixFor(status: number, credentialsHint: string): string {
  if (status === 401) return `Check the credentials: ${credentialsHint}.`;
  if (status === 403) return `Give the credentials access: ${credentialsHint}.`;
  if (status === 429 || status >= 500) return "The service is busy or failing; try again in a minute.";
  return "Check the backend's settings in Settings → State Backends.";
}

/** A network failure (no answer at all) as one sentence. */
export function unreachable(service: string, url: string, e: unknown): RemoteStateError {
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (e as Error)?.message ?? "no answer";
  return new RemoteStateError(`${service} could not be reached at ${new URL(url).origin} (${why}). Check the address and that this host can reach it.`, 0);
}

/** A success answer's JSON, or one sentence when it is not JSON (a proxy's page, a truncated answer). */
export function parseAnswer(service: string, action: string, text: string): any {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new RemoteStateError(`${service} answered the request to ${action} with something that is not JSON. Check that the backend's address points at the service's API, not a web page or a proxy.`, 502);
  }
}
