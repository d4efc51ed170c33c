// A request's route as a metric label: its path with ids, organization slugs and names replaced by
// placeholders, so the label's values stay few whatever addresses clients send.

const ID = /^[a-z]{2,6}_[0-9A-HJKMNP-TV-Z]{26}$/; // lib/ids.ts: prefix_ULID
const OPAQUE = /^([0-9a-f-]{16,}|\d+|[A-Za-z0-9_-]{32,})$/; // uuids, numbers, tokens
/** A segment after one of these is a value, not a route: /o/{org}, /secrets/{name}, /api/trpc/{procedure}. */
const PARAM_AFTER: Record<string, string> = { o: "{org}", secrets: "{name}", invite: "{token}" };
const MAX_TEMPLATES = 500;

const seen = new Set<string>();

/** `/o/acme/components/cmp_01J…?tab=jobs` → `/o/{org}/components/{id}`; an unmatched address (404) is `(unmatched)`. */
export function routeTemplate(url: string, status: number): string {
  if (status === 404) return "(unmatched)";
  const path = url.split("?")[0]!.split("#")[0]!;
  if (path.startsWith("/_next/")) return "/_next/*";
  // tRPC names its procedures in the path, batches joined by commas: one label for the whole endpoint.
  if (path.startsWith("/api/trpc/")) return "/api/trpc/{procedures}";
  const out: string[] = [];
  const parts = path.split("/").slice(1, 9);
  for (let i = 0; i < parts.length; i++) {
    const seg = parts[i]!;
    const prev = parts[i - 1];
    if (prev !== undefined && PARAM_AFTER[prev]) out.push(PARAM_AFTER[prev]);
    else if (ID.test(seg) || OPAQUE.test(seg)) out.push("{id}");
    else if (!/^[a-z][a-z0-9._-]{0,40}$/.test(seg) && seg !== "") out.push("{param}");
    else out.push(seg);
  }
  const template = `/${out.join("/")}`;
  if (seen.has(template)) return template;
  if (seen.size >= MAX_TEMPLATES) return "(other)";
  seen.add(template);
  return template;
}
