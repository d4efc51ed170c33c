#!/usr/bin/env node
// runner/main.ts as `node --import tsx runner/main.ts` runs it, started from its esbuild bundle
// (scripts/bundles.mjs) when that is up to date or can be built, else through tsx. The integration
// harness starts its runner processes with it: each starts in a quarter of the time.
// Usage: node scripts/runner.mjs --url … [runner/main.ts's options]
import { loadMain } from "./bundles.mjs";

const main = await loadMain("planton-runner");
await main(process.argv);
