import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { runnerConfig } from "./config";

describe("the runner's configuration", () => {
  it("has defaults and reads what is set", () => {
    expect(runnerConfig({})).toEqual({ PLANTON_URL: undefined, PLANTON_RUNNER_TOKEN: undefined, PLANTON_RUNNER_NAME: undefined, PLANTON_RUNNER_HEARTBEAT_MS: 5_000, PLANTON_RUNNER_NICE: 0, PLANTON_RUNNER_PARENT_PID: undefined, PLANTON_RUNNER_LOCAL_BASE: undefined, PLANTON_RUNNER_LOCAL_ROOTS: [] });
    expect(runnerConfig({ PLANTON_URL: "http://127.0.0.1:3000", PLANTON_RUNNER_HEARTBEAT_MS: "1000", PLANTON_RUNNER_PARENT_PID: "4242" })).toMatchObject({
      PLANTON_URL: "http://127.0.0.1:3000",
      PLANTON_RUNNER_HEARTBEAT_MS: 1000,
      PLANTON_RUNNER_PARENT_PID: 4242,
    });
  });

  it("reads the local base and the allowed roots as absolute folders", () => {
    expect(runnerConfig({ PLANTON_RUNNER_LOCAL_BASE: "/data/local-infra", PLANTON_RUNNER_LOCAL_ROOTS: "/srv/a:/srv/b" })).toMatchObject({ PLANTON_RUNNER_LOCAL_BASE: "/data/local-infra", PLANTON_RUNNER_LOCAL_ROOTS: ["/srv/a", "/srv/b"] });
    expect(() => runnerConfig({ PLANTON_RUNNER_LOCAL_ROOTS: "/srv/a:sites" })).toThrow(
      `PLANTON_RUNNER_LOCAL_ROOTS is "/srv/a:sites", which is not a list of absolute folders separated by ":" (sites is relative). Set it like PLANTON_RUNNER_LOCAL_ROOTS=/srv/sites:/srv/exports, or unset it for the default.`,
    );
  });

  it("refuses a bad value with the variable, what is wrong with it and an example", () => {
    expect(() => runnerConfig({ PLANTON_URL: "planton.example.com" })).toThrow(
      `The Planton runner did not start: PLANTON_URL is "planton.example.com", which is not a URL that starts with http:// or https://. Set it like PLANTON_URL=https://planton.example.com, or unset it for the default.`,
    );
  });

  it("the runner process stops at start on a bad value, naming it", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", "runner/main.ts"], { env: { ...process.env, PLANTON_RUNNER_HEARTBEAT_MS: "fast" }, encoding: "utf8" });
    expect(r.status).toBe(2);
    const lines = (r.stdout + r.stderr).trim().split("\n").map((l) => JSON.parse(l) as { level: string; msg: string });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "error",
        msg: `The Planton runner did not start: PLANTON_RUNNER_HEARTBEAT_MS is "fast", which is not a whole number from 100 to 600000. Set it like PLANTON_RUNNER_HEARTBEAT_MS=5000, or unset it for the default.`,
      }),
    );
  });
});
