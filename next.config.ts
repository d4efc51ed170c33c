import type { NextConfig } from "next";

const config: NextConfig = {
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "better-auth", "@better-auth/drizzle-adapter"],
  typedRoutes: false,
  devIndicators: false,
  poweredByHeader: false,
  // `npm test` type-checks the whole tree with tsc; the build need not do it again.
  typescript: { ignoreBuildErrors: true },
};

export default config;
