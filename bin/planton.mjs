#!/usr/bin/env node
// `npx planton …` from a checkout, with no build step. It runs .build/planton-cli.mjs, an esbuild bundle
// of cli/main.ts (scripts/build-cli.mjs), while every file it was built from is unchanged, and builds
// it again when one has changed: starting from the bundle takes a quarter of the second tsx takes.
// Should the bundle be impossible to build (or PLANTON_CLI_TSX=1), cli/main.ts runs through tsx as before.
import { pathToFileURL } from "node:url";

let main;
if (process.env.PLANTON_CLI_TSX !== "1") {
  try {
    const { BUNDLE, bundleIsFresh, buildCli } = await import("../scripts/build-cli.mjs");
    if (!bundleIsFresh()) await buildCli();
    ({ main } = await import(pathToFileURL(BUNDLE).href));
  } catch {
    main = undefined;
  }
}
if (!main) {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import("../cli/main.ts"));
}
await main(process.argv);
