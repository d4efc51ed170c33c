// The Node versions package.json promises (README's quick start repeats them) are ones every package the
// lockfile installs supports: `npm install` prints no engine warning on them and succeeds with npm's
// engine-strict. Optional packages (platform binaries, wasm fallbacks) are left out: npm skips one whose
// engines do not fit rather than fail. A dependency bumped to a release that drops a promised Node fails here.
import { describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";
import semver from "semver";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => JSON.parse(fs.readFileSync(path.join(root, file), "utf8"));

interface LockEntry {
  version?: string;
  optional?: boolean;
  engines?: { node?: string };
}

describe("Node versions", () => {
  const promised: string = read("package.json").engines.node;
  const lock: { packages: Record<string, LockEntry> } = read("package-lock.json");

  it("the lockfile records the promised range", () => {
    expect(lock.packages[""]?.engines?.node).toBe(promised);
  });

  it("every package the lockfile installs supports every Node version package.json promises", () => {
    const entries = Object.entries(lock.packages).filter(([where, e]) => where !== "" && !e.optional && e.engines?.node);
    expect(entries.length).toBeGreaterThan(50);
    const narrower = entries
      .filter(([, e]) => !semver.subset(promised, e.engines!.node!))
      .map(([where, e]) => `${where.replace(/^.*node_modules\//, "")}@${e.version} needs node ${e.engines!.node}`);
    expect(narrower).toEqual([]);
  });

  it("this machine's Node is one of them", () => {
    expect(semver.satisfies(process.versions.node, promised)).toBe(true);
  });
});
