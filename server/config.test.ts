import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { BlockList } from "node:net";
import fs from "node:fs";
import path from "node:path";
import { ConfigError } from "@/lib/env";
import { RUNNER_ENV } from "../runner/config";
import { SERVER_ENV, serverConfig } from "./config";

describe("the server's configuration", () => {
  it("has a default for every variable left unset (or set empty)", () => {
    const defaults = {
      PLANTON_DATA_DIR: path.resolve(".data"),
      DATABASE_URL: undefined,
      PLANTON_DB_POOL: 10,
      PORT: 3000,
      HOST: "127.0.0.1",
      PLANTON_URL: undefined,
      PLANTON_TRUSTED_ORIGINS: [],
      PLANTON_SERVER_URL: undefined,
      PLANTON_SECRET_KEY: undefined,
      PLANTON_SECRET_KEY_PREVIOUS: [],
      BETTER_AUTH_SECRET: undefined,
      PLANTON_AUTH_RATE_LIMIT: "on",
      // Empty: no proxy is trusted, so every request's client address is its socket's.
      PLANTON_TRUSTED_PROXIES: expect.any(BlockList),
      PLANTON_INVITATION_DAYS: 7,
      PLANTON_ADMIN_EMAIL: "admin@acme.example",
      PLANTON_ADMIN_PASSWORD: undefined,
      PLANTON_HOSTED_RUNNERS: 1,
      PLANTON_HOSTED_RUNNER_CAPACITY: 2,
      PLANTON_HOSTED_RUNNER_NICE: 10,
      PLANTON_LOCAL_ROOTS: [],
      PLANTON_STATE_LOCAL_ROOTS: [],
      PLANTON_MODULE_LOCAL_ROOTS: [],
      PLANTON_LEASE_SECONDS: 30,
    };
    expect(serverConfig({})).toEqual(defaults);
    expect(serverConfig({ DATABASE_URL: "", PLANTON_ADMIN_PASSWORD: "", PORT: "" })).toEqual(defaults);
    expect(serverConfig({}).PLANTON_TRUSTED_PROXIES.check("127.0.0.1")).toBe(false);
  });

  it("reads what is set", () => {
    const c = serverConfig({
      PLANTON_DATA_DIR: "/srv/planton",
      DATABASE_URL: "postgresql://planton@db:5432/planton",
      PLANTON_LEASE_SECONDS: "4",
      PLANTON_HOSTED_RUNNERS: "0",
      PLANTON_ADMIN_EMAIL: "Ops@Example.com",
      PLANTON_SECRET_KEY: "ab".repeat(32),
      PLANTON_AUTH_RATE_LIMIT: "off",
    });
    expect(c).toMatchObject({ PLANTON_DATA_DIR: "/srv/planton", DATABASE_URL: "postgresql://planton@db:5432/planton", PLANTON_LEASE_SECONDS: 4, PLANTON_HOSTED_RUNNERS: 0, PLANTON_ADMIN_EMAIL: "ops@example.com", PLANTON_AUTH_RATE_LIMIT: "off" });
    expect(c.PLANTON_SECRET_KEY).toEqual(Buffer.alloc(32, 0xab));
    expect(serverConfig({ PLANTON_SECRET_KEY: Buffer.alloc(32, 7).toString("base64") }).PLANTON_SECRET_KEY).toEqual(Buffer.alloc(32, 7));
    // Previous keys (a rotation), each as the key is given; one that is not a key is refused, naming which.
    expect(serverConfig({ PLANTON_SECRET_KEY_PREVIOUS: ` ${"cd".repeat(32)}, ${Buffer.alloc(32, 9).toString("base64")} ` }).PLANTON_SECRET_KEY_PREVIOUS).toEqual([Buffer.alloc(32, 0xcd), Buffer.alloc(32, 9)]);
    expect(() => serverConfig({ PLANTON_SECRET_KEY_PREVIOUS: `${"cd".repeat(32)},short` })).toThrow(/^The Planton console did not start: PLANTON_SECRET_KEY_PREVIOUS is a value of 70 characters \(not shown: it is a secret\), which is not a list of keys: its key 2 is not 32 bytes/);
    // A database URL is quoted with its password masked.
    expect(() => serverConfig({ DATABASE_URL: "mysql://planton:hunter2@db/planton" })).toThrow(/DATABASE_URL is "mysql:\/\/planton:\*\*\*@db\/planton", which is not a URL/);
  });

  it("reads PLANTON_TRUSTED_ORIGINS as origins, and refuses anything with a path", () => {
    expect(serverConfig({ PLANTON_TRUSTED_ORIGINS: "https://a.example, http://b.example:8080/" }).PLANTON_TRUSTED_ORIGINS).toEqual(["https://a.example", "http://b.example:8080"]);
    expect(() => serverConfig({ PLANTON_TRUSTED_ORIGINS: "https://a.example/console" })).toThrow(
      new ConfigError(
        `The Planton console did not start: PLANTON_TRUSTED_ORIGINS is "https://a.example/console", which is not a list of origins: https://a.example/console is not scheme://host[:port] with nothing after. Set it like PLANTON_TRUSTED_ORIGINS=https://planton.example.com,https://ops.example.com, or unset it for the default.`,
      ),
    );
  });

  it("refuses a bad value with the variable, what is wrong with it and an example", () => {
    expect(() => serverConfig({ PLANTON_LEASE_SECONDS: "soon" })).toThrow(
      new ConfigError(`The Planton console did not start: PLANTON_LEASE_SECONDS is "soon", which is not a whole number from 1 to 3600. Set it like PLANTON_LEASE_SECONDS=60, or unset it for the default.`),
    );
    const err = (() => {
      try {
        serverConfig({ DATABASE_URL: "mysql://db/planton", PLANTON_SECRET_KEY: "short", PLANTON_DB_POOL: "0", PLANTON_AUTH_RATE_LIMIT: "no" });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.message).toContain(`DATABASE_URL is "mysql://db/planton", which is not a URL that starts with postgres:// or postgresql://. Set it like DATABASE_URL=postgres://`);
    // A secret's value is described, never quoted back (the message goes to the console's log).
    expect(err!.message).toContain(`PLANTON_SECRET_KEY is a value of 5 characters (not shown: it is a secret), which is not 32 bytes as 64 hex characters or base64 (generate one with openssl rand -hex 32).`);
    expect(err!.message).not.toContain("short");
    expect(err!.message).toContain(`PLANTON_DB_POOL is "0", which is not a whole number from 1 to 1000.`);
    expect(err!.message).toContain(`PLANTON_AUTH_RATE_LIMIT is "no", which is not one of on, off.`);
  });

  it("npm start refuses a bad value before it builds or serves anything", () => {
    const r = spawnSync(process.execPath, ["scripts/start.mjs"], { env: { ...process.env, PORT: "99999" }, encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`PORT is "99999", which is not a whole number from 1 to 65535. Set it like PORT=8080, or unset it for the default.`);
    expect(r.stdout).not.toContain("Building the console");
  });

  it("README's configuration table lists every variable the server and the runner read", () => {
    const readme = fs.readFileSync("README.md", "utf8");
    const table = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("\n## ", readme.indexOf("## Configuration") + 1));
    for (const name of [...Object.keys(SERVER_ENV), ...Object.keys(RUNNER_ENV)]) expect(table, name).toContain(`\`${name}\``);
  });
});
