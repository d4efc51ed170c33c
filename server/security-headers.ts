// The security headers every response carries. No imports: next.config.ts reads this file too, for the
// machine APIs that proxy.ts leaves alone.

/** The pages' policy: scripts only with this response's nonce (Next.js stamps it on its own scripts). */
export function pageContentSecurityPolicy(nonce: string, dev = false): string {
  return [
    "default-src 'self'",
    // 'strict-dynamic' lets the nonce'd bootstrap load the page's chunks; dev needs eval for React's error overlay.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    // xterm's DOM renderer and sonner add <style> elements and React renders style attributes; styles cannot run code.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** For everything that is not a page (API answers, static files): nothing may load, run or frame it. */
export const NON_PAGE_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The headers every response carries, whatever serves it. */
export const FIXED_SECURITY_HEADERS: Record<string, string> = {
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "strict-origin-when-cross-origin",
};

export const HSTS = "max-age=31536000";

export function securityHeaders(opts: { https: boolean; csp: string }): Record<string, string> {
  return { ...FIXED_SECURITY_HEADERS, "Content-Security-Policy": opts.csp, ...(opts.https ? { "Strict-Transport-Security": HSTS } : {}) };
}


/** A request a TLS-terminating proxy forwarded from https (the load balancer's `X-Forwarded-Proto`): its answer carries HSTS. */
export const FORWARDED_HTTPS = { header: "x-forwarded-proto", value: "https" } as const;
