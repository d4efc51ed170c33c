// Every request but the machine APIs' passes here first (Next.js's proxy): a change from a page that
// is not the console's is refused, and every response gets the security headers, pages with a
// per-request script nonce. /api/runner and /api/v1 take API or runner tokens only and may carry large
// uploads, which a proxy would buffer; next.config.ts gives their answers the same headers.
import { NextResponse, type NextRequest } from "next/server";
import { serverConfig } from "@/server/config";
import { NON_PAGE_CONTENT_SECURITY_POLICY, pageContentSecurityPolicy, securityHeaders } from "@/server/security-headers";
import { bodyTooLargeMessage, originRefusal, refusalResponse, servedOverHttps, type EdgeConfig } from "@/server/web-edge";
import { TRPC_MAX_BODY_BYTES } from "@/lib/trpc/limits";

let edge: EdgeConfig | undefined;

export function proxy(request: NextRequest) {
  const config = (edge ??= serverConfig());
  const { pathname } = request.nextUrl;
  const https = servedOverHttps(config, request.nextUrl);
  const isPage = !pathname.startsWith("/api/") && !pathname.startsWith("/_next/") && pathname !== "/metrics";

  const refusal = originRefusal(request, config);
  const tooLarge = pathname.startsWith("/api/auth/") && Number(request.headers.get("content-length") ?? "0") > TRPC_MAX_BODY_BYTES;
  if (refusal || tooLarge) {
    const res = refusal ? refusalResponse(pathname, 403, "FORBIDDEN", refusal) : refusalResponse(pathname, 413, "PAYLOAD_TOO_LARGE", bodyTooLargeMessage());
    for (const [k, v] of Object.entries(securityHeaders({ https, csp: NON_PAGE_CONTENT_SECURITY_POLICY }))) res.headers.set(k, v);
    return res;
  }

  if (!isPage) {
    const res = NextResponse.next();
    for (const [k, v] of Object.entries(securityHeaders({ https, csp: NON_PAGE_CONTENT_SECURITY_POLICY }))) res.headers.set(k, v);
    return res;
  }
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString("base64");
  const csp = pageContentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  // Next.js reads the nonce from the request's policy and stamps it on the scripts it renders.
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("content-security-policy", csp);
  requestHeaders.set("x-nonce", nonce);
  const res = NextResponse.next({ request: { headers: requestHeaders } });
  for (const [k, v] of Object.entries(securityHeaders({ https, csp }))) res.headers.set(k, v);
  return res;
}

export const config = {
  matcher: ["/((?!api/runner/|api/v1/).*)"],
};
