#!/usr/bin/env node
// The `planton` CLI (and the runner process, for the test harness) as esbuild bundles, so a process
// starts in a quarter of a second instead of the second or more tsx takes to load and transform
// cli/, runner/ and lib/ at every start. bin/planton.mjs (and scripts/runner.mjs) load a bundle while
// every file it was built from is unchanged (same size and mtime), and otherwise build it again (or,
// if that fails, run the TypeScript through tsx as before). Nothing here is committed: .build/ is in
// .gitignore. Usage: node scripts/bundles.mjs builds both (npm test runs it before the tests).
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const root = path.resolve(import.meta.dirname, "..");
/** Each bundle and its entry point. */
export const ENTRIES = { "planton-cli": "cli/main.ts", "planton-runner": "runner/main.ts" };
/** Where a bundle is, and its manifest (what it was built from). */
export const bundleFile = (name) => path.join(root, ".build", `${name}.mjs`);
const manifestFile = (name) => path.join(root, ".build", `${name}.json`);
/** Files that change how the sources are read, besides the sources themselves. */
const SETTINGS = ["package.json", "tsconfig.json"];

/** A file's identity for the freshness check: its size and modification time. */
const stamp = (file) => {
  const st = fs.statSync(file);
  return `${st.size}:${st.mtimeMs}`;
};

/** True when the bundle exists and every file it was built from is as it was then. */
export function bundleIsFresh(name) {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestFile(name), "utf8"));
    if (manifest.node !== process.version || stamp(bundleFile(name)) !== manifest.bundle) return false;
    for (const [file, was] of Object.entries(manifest.inputs)) if (stamp(path.join(root, file)) !== was) return false;
  } catch {
    return false;
  }
  return true;
}

/** Builds a bundle and its manifest; concurrent builds each write their own files and rename them into place. */
export async function buildBundle(name) {
  const BUNDLE = bundleFile(name);
  const MANIFEST = manifestFile(name);
  // esbuild comes with tsx (a dependency): resolve it from there rather than relying on hoisting.
  const requireFromTsx = createRequire(createRequire(path.join(root, "package.json")).resolve("tsx/package.json"));
  const { build } = await import(pathToFileURL(requireFromTsx.resolve("esbuild")).href);
  // Stamps taken before the build: a file edited during it makes the bundle stale, never wrongly fresh.
  const before = new Map();
  const result = await build({
    entryPoints: [path.join(root, ENTRIES[name])],
    absWorkingDir: root,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    tsconfig: path.join(root, "tsconfig.json"),
    // Class and function names stay as written (esbuild would rename clashing ones): errors read the same as under tsx.
    keepNames: true,
    // Bundled CommonJS packages (commander) require node's own modules.
    banner: { js: 'import { createRequire as __plantonCreateRequire } from "node:module"; const require = __plantonCreateRequire(import.meta.url);' },
    write: false,
    metafile: true,
    logLevel: "silent",
    plugins: [
      {
        name: "stamp-inputs",
        setup(b) {
          b.onLoad({ filter: /.*/ }, (args) => {
            if (args.namespace === "file" && !before.has(args.path)) before.set(args.path, stamp(args.path));
            return undefined;
          });
        },
      },
    ],
  });
  const inputs = {};
  for (const file of [...Object.keys(result.metafile.inputs), ...SETTINGS]) {
    const full = path.resolve(root, file);
    inputs[path.relative(root, full)] = before.get(full) ?? stamp(full);
  }
  fs.mkdirSync(path.dirname(BUNDLE), { recursive: true });
  const tmp = `.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(BUNDLE + tmp, result.outputFiles[0].contents);
  // The manifest names the bundle it was written with (renaming keeps the mtime): two builds racing
  // cannot leave one's manifest vouching for the other's bundle.
  fs.writeFileSync(MANIFEST + tmp, JSON.stringify({ node: process.version, bundle: stamp(BUNDLE + tmp), inputs }));
  fs.renameSync(BUNDLE + tmp, BUNDLE);
  fs.renameSync(MANIFEST + tmp, MANIFEST);
}

/** The entry's `main`: from its bundle (built first when stale), or from the TypeScript through tsx when no bundle can be built or PLANTON_NO_BUNDLE=1. */
export async function loadMain(name) {
  if (process.env.PLANTON_NO_BUNDLE !== "1") {
    try {
      if (!bundleIsFresh(name)) await buildBundle(name);
      return (await import(pathToFileURL(bundleFile(name)).href)).main;
    } catch {
      // Falls through to tsx.
    }
  }
  const { register } = await import("tsx/esm/api");
  register();
  return (await import(pathToFileURL(path.join(root, ENTRIES[name])).href)).main;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  for (const name of Object.keys(ENTRIES)) {
    const started = Date.now();
    await buildBundle(name);
    console.log(`Built ${path.relative(root, bundleFile(name))} in ${Date.now() - started} ms`);
  }
}
