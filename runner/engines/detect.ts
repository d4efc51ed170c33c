// The engines this runner can run, found once at start and sent with every claim, so the server
// hands it only jobs whose module's engine it has: the builtin engine always, and tofu, terraform
// and pulumi when their binary is on PATH and reports its version.
import os from "node:os";
import { PROVISIONERS, type Provisioner } from "../../lib/catalog";
import { ENGINE_VERSION } from "../../engine/index";
import type { Logger } from "../log";
import { findBinary, runCli } from "./cli";

export type EngineVersions = Partial<Record<Provisioner, string>>;

/** How long a binary may take to print its version before it counts as not working. */
const VERSION_TIMEOUT_MS = 15_000;

/** Each CLI engine: the binary, how to ask its version, and how to read the answer. */
const CLI_ENGINES: { engine: Exclude<Provisioner, "builtin">; binary: string; args: string[]; read: (stdout: string) => string | undefined }[] = [
  { engine: "tofu", binary: "tofu", args: ["version", "-json"], read: (out) => jsonVersion(out) },
  { engine: "terraform", binary: "terraform", args: ["version", "-json"], read: (out) => jsonVersion(out) },
  // `pulumi version` prints one line such as `v3.130.0`.
  { engine: "pulumi", binary: "pulumi", args: ["version"], read: (out) => out.trim().split("\n")[0]?.trim().replace(/^v(?=\d)/, "") || undefined },
];

/** `tofu version -json` and `terraform version -json` both answer `{"terraform_version": "1.8.0", …}`. */
function jsonVersion(stdout: string): string | undefined {
  try {
    const v = (JSON.parse(stdout) as { terraform_version?: unknown }).terraform_version;
    return typeof v === "string" && v ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The engines on this host with their versions; a binary on PATH that cannot tell its version is left out, with a warning. */
export async function detectEngines(env: NodeJS.ProcessEnv, log?: Logger): Promise<EngineVersions> {
  const found: EngineVersions = { builtin: ENGINE_VERSION };
  await Promise.all(
    CLI_ENGINES.map(async ({ engine, binary, args, read }) => {
      const bin = findBinary([binary], env);
      if (!bin) return;
      let why: string;
      try {
        // CHECKPOINT_DISABLE: terraform and tofu would otherwise ask the network whether they are outdated.
        const { code, stdout } = await runCli(bin, args, { cwd: os.tmpdir(), env: { ...env, CHECKPOINT_DISABLE: "1" }, signal: AbortSignal.timeout(VERSION_TIMEOUT_MS) });
        const version = code === 0 ? read(stdout) : undefined;
        if (version) {
          found[engine] = version.slice(0, 100);
          return;
        }
        why = code === 0 ? "its answer names no version" : `it exited with code ${code}`;
      } catch (err) {
        why = (err as Error).message;
      }
      log?.warn(`${bin} is on PATH but \`${binary} ${args.join(" ")}\` did not tell its version (${why}); this runner does not offer ${engine}`);
    }),
  );
  // In PROVISIONERS order, whatever order the binaries answered in.
  return Object.fromEntries(PROVISIONERS.filter((p) => found[p]).map((p) => [p, found[p]]));
}
