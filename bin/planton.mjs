#!/usr/bin/env node
// `npx planton …` from a checkout, with no build step. It runs .build/planton-cli.mjs, an esbuild bundle
// of cli/main.ts (scripts/bundles.mjs), while every file it was built from is unchanged, and builds
// it again when one has changed: starting from the bundle takes a quarter of the second tsx takes.
// Should the bundle be impossible to build (or PLANTON_NO_BUNDLE=1), cli/main.ts runs through tsx as before.
import { loadMain } from "../scripts/bundles.mjs";

const main = await loadMain("planton-cli");
await main(process.argv);
