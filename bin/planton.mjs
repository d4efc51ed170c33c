#!/usr/bin/env node
// `npx planton …` from a checkout: runs cli/main.ts through tsx (no build step).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../cli/main.ts");
await main(process.argv);
