import { mkdtemp, mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import yauzl from "yauzl";
import { apply, plan } from "../index";
import type { StateV4, UiMessage } from "../types";

export const CATALOG = path.resolve(import.meta.dirname, "../../catalog/modules");

export async function tempDir(prefix = "planton-engine-"): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix));
}

/** Writes a module folder from a map of file path (`main.tf`, `modules/site/main.tf`) → text. */
export async function writeModule(files: Record<string, string>): Promise<string> {
  const dir = await tempDir("planton-module-");
  await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), text);
  }
  return dir;
}

/** Collects UI lines, and asserts each one survives JSON (as it must, to cross a process boundary). */
export function collector(): { lines: UiMessage[]; emit: (l: UiMessage) => void; ofType: <T extends UiMessage["type"]>(t: T) => Extract<UiMessage, { type: T }>[] } {
  const lines: UiMessage[] = [];
  return {
    lines,
    emit: (l) => lines.push(JSON.parse(JSON.stringify(l)) as UiMessage),
    ofType: (t) => lines.filter((l) => l.type === t) as never,
  };
}

export function persisted(): { states: StateV4[]; persistState: (s: StateV4) => Promise<void> } {
  const states: StateV4[] = [];
  return { states, persistState: async (s) => void states.push(s) };
}

/** Plans and applies, asserting the apply is clean; the state it leaves. */
export async function applied(opts: Parameters<typeof plan>[0]): Promise<StateV4> {
  const p = await plan(opts);
  const r = await apply(opts, p.plan);
  expect(r.diagnostics).toEqual([]);
  expect(r.status).toBe("applied");
  return r.state;
}

/** The files in a zip (what the archive provider wrote), by name, read with yauzl. */
export async function unzip(bytes: Buffer): Promise<Record<string, string>> {
  const zip = await yauzl.fromBufferPromise(bytes);
  const out: Record<string, string> = {};
  for await (const entry of zip.eachEntry()) {
    const chunks: Buffer[] = [];
    for await (const c of await zip.openReadStreamPromise(entry)) chunks.push(c as Buffer);
    out[entry.fileName] = Buffer.concat(chunks).toString("utf8");
  }
  return out;
}
