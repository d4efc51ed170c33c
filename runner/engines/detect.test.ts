// Which engines a runner offers: found on PATH with the versions they report. The CLIs are third-party
// binaries, so these are stand-in shell scripts that answer only the version command the runner must send.
import { chmod, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ENGINE_VERSION } from "../../engine/index";
import { createLogger } from "../log";
import { tempDir } from "../test/helpers";
import { detectEngines } from "./detect";

/** A folder holding stand-in binaries: each prints `out` and exits 0 for exactly `args`, and exits 3 for anything else. */
async function standIns(bins: Record<string, { args: string; out: string; code?: number }>) {
  const dir = await tempDir();
  for (const [name, { args, out, code = 0 }] of Object.entries(bins)) {
    await writeFile(path.join(dir, name), `#!/bin/sh\nif [ "$*" = "${args}" ]; then cat <<'EOF'\n${out}\nEOF\nexit ${code}; fi\nexit 3\n`);
    await chmod(path.join(dir, name), 0o755);
  }
  return dir;
}

const env = (...dirs: string[]) => ({ PATH: [...dirs, "/usr/bin", "/bin"].join(path.delimiter) }) as unknown as NodeJS.ProcessEnv;

describe("the engines a runner detects at start", () => {
  it("has the builtin engine always, and tofu, terraform and pulumi with their versions when they are on PATH", async () => {
    const dir = await standIns({
      tofu: { args: "version -json", out: '{"terraform_version":"1.8.5","platform":"linux_amd64","provider_selections":{},"terraform_outdated":false}' },
      terraform: { args: "version -json", out: '{\n  "terraform_version": "1.11.4",\n  "platform": "linux_amd64"\n}' },
      pulumi: { args: "version", out: "v3.140.0" },
    });
    expect(await detectEngines(env(dir))).toEqual({ builtin: ENGINE_VERSION, tofu: "1.8.5", terraform: "1.11.4", pulumi: "3.140.0" });
  });

  it("offers only the builtin engine when no engine binary is on PATH", async () => {
    expect(await detectEngines(env(await tempDir()))).toEqual({ builtin: ENGINE_VERSION });
  });

  it("leaves out a binary that cannot tell its version, and says so", async () => {
    const dir = await standIns({
      tofu: { args: "version -json", out: "Error: not a working install", code: 1 },
      pulumi: { args: "version", out: "" },
    });
    const lines: { level: string; msg: string }[] = [];
    const found = await detectEngines(env(dir), createLogger({}, (l) => lines.push(JSON.parse(l))));
    expect(found).toEqual({ builtin: ENGINE_VERSION });
    expect(lines.map((l) => [l.level, l.msg]).sort()).toEqual([
      ["warn", `${path.join(dir, "pulumi")} is on PATH but \`pulumi version\` did not tell its version (its answer names no version); this runner does not offer pulumi`],
      ["warn", `${path.join(dir, "tofu")} is on PATH but \`tofu version -json\` did not tell its version (it exited with code 1); this runner does not offer tofu`],
    ]);
  });
});
