import type { NextConfig } from "next";
import { FIXED_SECURITY_HEADERS, FORWARDED_HTTPS, HSTS, NON_PAGE_CONTENT_SECURITY_POLICY } from "./server/security-headers";

// proxy.ts sets these on everything else; the machine APIs skip the proxy (see there) and get them here.
const machineApiHeaders = [
  ...Object.entries({ ...FIXED_SECURITY_HEADERS, "Content-Security-Policy": NON_PAGE_CONTENT_SECURITY_POLICY }).map(([key, value]) => ({ key, value })),
];
const overHttps = [{ type: "header" as const, key: FORWARDED_HTTPS.header, value: FORWARDED_HTTPS.value }];

const config: NextConfig = {
  // prom-client and OpenTelemetry keep process-wide registries: one copy from node_modules, not one per bundle.
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "better-auth", "@better-auth/drizzle-adapter", "prom-client", "@opentelemetry/api", "@opentelemetry/core", "@opentelemetry/resources", "@opentelemetry/sdk-trace-base", "@opentelemetry/exporter-trace-otlp-http"],
  typedRoutes: false,
  devIndicators: false,
  poweredByHeader: false,
  // `npm test` type-checks the whole tree with tsc; the build need not do it again.
  typescript: { ignoreBuildErrors: true },
  async headers() {
    return ["/api/runner/:path*", "/api/v1/:path*"].flatMap((source) => [
      { source, headers: machineApiHeaders },
      { source, has: overHttps, headers: [{ key: "Strict-Transport-Security", value: HSTS }] },
    ]);
  },
};

export default config;
