import type { NextConfig } from "next";

const config: NextConfig = {
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "better-auth", "@better-auth/drizzle-adapter"],
  typedRoutes: false,
  devIndicators: false,
  poweredByHeader: false,
};

export default config;
