// Where the console goes after sign-in: only a path on the console itself, never another site.

const HOME = "/";
const BASE = "http://console.invalid";

/**
 * `next` as a same-origin path (`/o/acme/jobs?status=running`), or `/` (which opens the organization's
 * home) for anything else: absolute URLs, protocol-relative `//host`, `/\host`, `javascript:` and the like.
 */
export function safeNextPath(next: string | null | undefined): string {
  if (typeof next !== "string" || !next.startsWith("/")) return HOME;
  // Browsers read `\` as `/` and drop tabs and newlines, so `/\host` and `/\t/host` would leave the console.
  if (/[\\\u0000-\u001f\u007f\s]/.test(next) || next.startsWith("//")) return HOME;
  let url: URL;
  try {
    url = new URL(next, BASE);
  } catch {
    return HOME;
  }
  if (url.origin !== BASE) return HOME;
  const path = `${url.pathname}${url.search}${url.hash}`;
  return path.startsWith("//") ? HOME : path;
}
