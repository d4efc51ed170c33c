// For the CLI suites: the real `planton` binary (node bin/planton.mjs) as its own process.
import { spawn } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A `planton` runner bound to one server and login; `env` adds to (or, with undefined, removes from) the defaults. */
export function plantonCli(defaults: () => { url: string; token: string; configDir: string }) {
  function spawnPlanton(args: string[], env: Record<string, string | undefined> = {}) {
    const d = defaults();
    const merged: Record<string, string | undefined> = { ...process.env, PLANTON_URL: d.url, PLANTON_TOKEN: d.token, PLANTON_CONFIG_DIR: d.configDir, NO_COLOR: "1", ...env };
    for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
    const child = spawn(process.execPath, [path.join(root, "bin/planton.mjs"), ...args], { cwd: root, env: merged as NodeJS.ProcessEnv, stdio: ["ignore", "pipe", "pipe"] });
    const run: Run = { code: null, stdout: "", stderr: "" };
    child.stdout!.on("data", (d) => (run.stdout += d));
    child.stderr!.on("data", (d) => (run.stderr += d));
    const done = new Promise<Run>((resolve) => child.on("close", (code) => resolve({ ...run, code })));
    /** Resolves once the process has printed `text` on stdout; fails if it ends without. */
    const said = (text: string) =>
      new Promise<void>((resolve, reject) => {
        if (run.stdout.includes(text)) return resolve();
        const onData = () => run.stdout.includes(text) && (child.stdout!.off("data", onData), resolve());
        child.stdout!.on("data", onData);
        void done.then((r) => (r.stdout.includes(text) ? resolve() : reject(new Error(`planton ${args.join(" ")} ended (${r.code}) without saying "${text}":\n${r.stdout}${r.stderr}`))));
      });
    return { child, run, done, said };
  }
  const planton = (args: string[], env?: Record<string, string | undefined>) => spawnPlanton(args, env).done;
  return { spawnPlanton, planton };
}
