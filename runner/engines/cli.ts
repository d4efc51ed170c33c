// Finding and running engine CLIs (tofu, terraform, pulumi) with line-by-line output.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** The first of `names` found on PATH, as an absolute path. */
export function findBinary(names: string[], env: NodeJS.ProcessEnv): string | undefined {
  const dirs = (env.PATH ?? "").split(path.delimiter).filter(Boolean);
  for (const name of names) {
    for (const dir of dirs) {
      const candidate = path.join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

export interface CliRun {
  cwd: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  onStdout?: (line: string) => void;
  onStderr?: (line: string) => void;
}

/** Runs a CLI to completion; resolves with its exit code. The abort signal sends SIGINT (engines stop gracefully on it). */
export function runCli(bin: string, args: string[], opts: CliRun): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    const lines = (stream: NodeJS.ReadableStream, each?: (l: string) => void, keep = false) => {
      let buf = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        if (keep) stdout += chunk;
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf("\n")) >= 0) {
          each?.(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
      });
      stream.on("end", () => buf && each?.(buf));
    };
    lines(child.stdout!, opts.onStdout, true);
    lines(child.stderr!, opts.onStderr);
    const onAbort = () => child.kill("SIGINT");
    opts.signal.addEventListener("abort", onAbort, { once: true });
    child.on("error", reject);
    child.on("close", (code, sig) => {
      opts.signal.removeEventListener("abort", onAbort);
      resolve({ code: code ?? (sig ? 128 : 1), stdout });
    });
  });
}
