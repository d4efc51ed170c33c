import { defineConfig } from "vitest/config";
import os from "node:os";
import path from "node:path";

const alias = { "@": path.resolve(import.meta.dirname) };
const exclude = ["node_modules/**", "e2e/**", ".next/**", ".data/**", ".tmp/**"];
// The tests keep `local` state backends in temporary folders: the operator's allowance (server/services/state-backends/local-folder.ts).
const env = { PLANTON_STATE_LOCAL_ROOTS: process.env.PLANTON_STATE_LOCAL_ROOTS ?? os.tmpdir() };

export default defineConfig({
  resolve: { alias },
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two test files at once (each in its own process, database, data folders and ports), from both
    // projects together: most files wait on the processes they start (the console, runners, Postgres),
    // so one file at a time left one of CI's two cores idle. `vitest run --maxWorkers=N` overrides it.
    maxWorkers: 2,
    env,
    globalSetup: ["./test/global-setup.ts"],
    projects: [
      // Everything, against a real Postgres the harness starts (or DATABASE_URL).
      { extends: true, resolve: { alias }, test: { name: "postgres", include: ["**/*.test.ts"], exclude } },
      // The database-facing suites again on the embedded PGlite driver.
      {
        extends: true,
        resolve: { alias },
        test: { name: "pglite", include: ["db/**/*.test.ts", "server/**/*.test.ts"], exclude, env: { ...env, PLANTON_TEST_DRIVER: "pglite" } },
      },
    ],
  },
});
