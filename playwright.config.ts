import { defineConfig } from "@playwright/test";

// The specs that work in the seeded demo organization `acme`: they share its components, its
// local-sandbox connection (whose authorization secrets.spec changes), its members and its job list,
// so they run one at a time. Every other spec makes an organization of its own in its beforeAll and
// runs beside them. A new spec that uses acme belongs in this list.
const DEMO_ORGANIZATION_SPECS = ["accounts", "api-reference", "foundation", "jobs", "protect", "secrets", "settings", "state-versions", "web-edge"].map((name) => `${name}.spec.ts`);

export default defineConfig({
  testDir: "./e2e",
  globalSetup: "./e2e/global-setup.ts",
  // One spec file at a time. Two at once (the projects below allow it) made the run slower on CI's two
  // cores: 14.9 minutes against about 10, every test about twice as long, since the console, runner,
  // Postgres and two Chromiums already keep both cores busy. `--workers 2` tries it on a bigger machine.
  fullyParallel: false,
  workers: 1,
  projects: [
    { name: "demo organization", testMatch: DEMO_ORGANIZATION_SPECS, workers: 1 },
    { name: "own organizations", testIgnore: DEMO_ORGANIZATION_SPECS },
  ],
  retries: 0,
  timeout: 120_000,
  expect: { timeout: 20_000 },
  reporter: process.env.PLAYWRIGHT_JSON_OUTPUT_NAME ? [["list"], ["json"]] : [["list"]],
  outputDir: ".tmp/e2e-results",
  use: {
    baseURL: process.env.E2E_BASE_URL,
    viewport: { width: 1360, height: 900 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-gpu"],
    },
  },
});
