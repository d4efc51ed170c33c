// The project's import rules (ARCHITECTURE.md), read from the sources: a file that breaks one fails here.
import { describe, expect, it } from "vitest";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const SOURCE_FOLDERS = ["app", "components", "server", "lib", "db", "engine", "runner", "cli", "scripts", "state-backends"];

function filesUnder(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|tsx|mjs)$/.test(e.name)) out.push(p);
    }
  };
  walk(path.join(root, folder));
  return out;
}

/** Test code: suites and the `test/` folders. */
const isTestCode = (file: string) => /\.test\.tsx?$/.test(file) || path.relative(root, file).split(path.sep).includes("test");

/** Every import of a file as a path from the project root (`@/x` and relative alike); packages as they are written. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, "utf8");
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1] ?? m[2]);
  return specs.map((s) => (s.startsWith("@/") ? s.slice(2) : s.startsWith(".") ? path.relative(root, path.resolve(path.dirname(file), s)) : s));
}

const production = SOURCE_FOLDERS.flatMap(filesUnder).filter((f) => !isTestCode(f));
const breaking = (files: string[], bad: (spec: string) => boolean) =>
  files.flatMap((f) => importsOf(f).filter(bad).map((spec) => `${path.relative(root, f)} imports ${spec}`));
const inFolder = (spec: string, folder: string) => spec === folder || spec.startsWith(`${folder}/`);

describe("dependency rules", () => {
  it("no production file imports the test harness", () => {
    expect(production.length).toBeGreaterThan(100);
    expect(breaking(production, (s) => inFolder(s, "test"))).toEqual([]);
  });

  it("engine/ imports nothing of the project but lib/", () => {
    const engine = production.filter((f) => inFolder(path.relative(root, f), "engine"));
    const project = ["app", "components", "server", "db", "runner", "cli", "catalog", "test"];
    expect(breaking(engine, (s) => project.some((p) => inFolder(s, p)))).toEqual([]);
  });

  it("state-backends/ imports nothing of the project but lib/", () => {
    const backends = production.filter((f) => inFolder(path.relative(root, f), "state-backends"));
    const project = ["app", "components", "server", "db", "runner", "cli", "engine", "catalog", "test"];
    expect(backends.length).toBeGreaterThan(0);
    expect(breaking(backends, (s) => project.some((p) => inFolder(s, p)))).toEqual([]);
  });

  it("the runner never imports server/ or db/", () => {
    const runner = production.filter((f) => inFolder(path.relative(root, f), "runner"));
    expect(breaking(runner, (s) => inFolder(s, "server") || inFolder(s, "db"))).toEqual([]);
  });

  it("nothing in app/ or components/ talks to the database: they call services", () => {
    const edges = production.filter((f) => inFolder(path.relative(root, f), "app") || inFolder(path.relative(root, f), "components"));
    expect(breaking(edges, (s) => inFolder(s, "db") || s === "drizzle-orm" || s.startsWith("drizzle-orm/"))).toEqual([]);
  });
});
