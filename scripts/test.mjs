#!/usr/bin/env node
// `npm test`: every check the project has, in order — types, the production build, unit and
// integration tests on Postgres and on PGlite, then the browser tests — and one closing line of counts.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
// Tests make no calls home.
process.env.NEXT_TELEMETRY_DISABLED ??= "1";
const tmp = path.join(root, ".tmp");
fs.mkdirSync(tmp, { recursive: true });
const bin = (name) => path.join(root, "node_modules", ".bin", name);
const only = process.argv.slice(2);
const want = (step) => only.length === 0 || only.includes(step);

let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];

/** As `run`, without blocking this process (so a step started beside it is looked after). */
function runAsync(label, cmd, args, env = {}) {
  console.log(`\n━━ ${label}: ${[path.basename(cmd), ...args].join(" ")}`);
  const child = spawn(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  return new Promise((resolve) => child.on("exit", (code) => resolve(code === 0)).on("error", () => resolve(false)));
}

function run(label, cmd, args, env = {}) {
  console.log(`\n━━ ${label}: ${[path.basename(cmd), ...args].join(" ")}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  return r.status === 0;
}

// The type check runs beside the production build (it is one process on one core; the build uses what
// is left), its output kept in a file and printed when it ends: on two cores this saves about a minute.
let types = null;
if (want("types")) {
  const log = path.join(tmp, "tsc.log");
  const out = fs.openSync(log, "w");
  console.log(`\n━━ types: tsc --noEmit (beside the build; its output follows the build's)`);
  const child = spawn(bin("tsc"), ["--noEmit"], { cwd: root, stdio: ["ignore", out, out] });
  types = new Promise((resolve) => child.on("exit", (code) => resolve(code === 0)).on("error", () => resolve(false))).then((ok) => {
    fs.closeSync(out);
    console.log(`\n━━ types: tsc --noEmit ${ok ? "passed" : "failed"}`);
    process.stdout.write(fs.readFileSync(log, "utf8"));
    if (ok) passed++;
    else {
      failed++;
      failures.push("TypeScript type check");
    }
  });
}

// The build comes before the tests: integration tests run the built console as its own process.
let built = false;
if (want("unit") || want("e2e")) {
  built = await runAsync("production build", process.execPath, [path.join(root, "node_modules/next/dist/bin/next"), "build"]);
  if (!built) {
    failed++;
    failures.push("next build");
  }
}
await types;

// The CLI suites start hundreds of `planton` processes, the job suites dozens of runners: they start
// from esbuild bundles (scripts/bundles.mjs), built here once rather than by the first of them. Should
// one fail to build, they still run (through tsx, slowly): that is reported, not hidden.
if (want("unit") || want("e2e")) {
  if (!run("CLI and runner bundles", process.execPath, [path.join(root, "scripts/bundles.mjs")])) {
    failed++;
    failures.push("scripts/bundles.mjs (the planton CLI and runner bundles)");
  }
}

if (want("unit") && built) {
  const report = path.join(tmp, "vitest-report.json");
  fs.rmSync(report, { force: true });
  run("unit and integration (Postgres and PGlite)", bin("vitest"), ["run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`]);
  if (fs.existsSync(report)) {
    const r = JSON.parse(fs.readFileSync(report, "utf8"));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    skipped += r.numPendingTests + (r.numTodoTests ?? 0);
    for (const file of r.testResults) for (const t of file.assertionResults) if (t.status === "failed") failures.push(`${path.relative(root, file.name)} › ${t.fullName}`);
    // A suite that failed to load has no assertion results; count it.
    for (const file of r.testResults) if (file.status === "failed" && !file.assertionResults.some((t) => t.status === "failed")) {
      failed++;
      failures.push(`${path.relative(root, file.name)} (did not run: ${file.message?.split("\n")[0]})`);
    }
  } else {
    failed++;
    failures.push("vitest produced no report");
  }
}

if (want("e2e") && built) {
  {
    const report = path.join(tmp, "playwright-report.json");
    fs.rmSync(report, { force: true });
    run("browser (Playwright, Chromium)", bin("playwright"), ["test"], { PLAYWRIGHT_JSON_OUTPUT_NAME: report });
    if (fs.existsSync(report)) {
      const r = JSON.parse(fs.readFileSync(report, "utf8"));
      passed += r.stats.expected;
      failed += r.stats.unexpected + r.stats.flaky;
      skipped += r.stats.skipped;
      const walk = (suite, trail) => {
        for (const s of suite.suites ?? []) walk(s, [...trail, s.title]);
        for (const spec of suite.specs ?? []) if (!spec.ok) failures.push(`${[...trail, spec.title].filter(Boolean).join(" › ")}`);
      };
      walk(r, []);
      // A failed test's page, as Playwright saw it (its accessibility snapshot): the screenshots stay on the machine, this reaches the log.
      const results = path.join(root, ".tmp", "e2e-results");
      for (const dir of fs.existsSync(results) ? fs.readdirSync(results) : []) {
        const context = path.join(results, dir, "error-context.md");
        if (!fs.existsSync(context)) continue;
        const text = fs.readFileSync(context, "utf8");
        console.log(`\n── ${dir}: the page when it failed ──\n${text.length > 6000 ? `${text.slice(0, 6000)}\n… (${text.length - 6000} more characters in ${path.relative(root, context)})` : text}`);
      }
      for (const e of r.errors ?? []) {
        failed++;
        failures.push(`Playwright: ${String(e.message).split("\n")[0]}`);
      }
    } else {
      failed++;
      failures.push("Playwright produced no report");
    }
  }
}

if (failures.length) {
  console.log("\nFailed:");
  for (const f of failures) console.log(`  ✗ ${f}`);
}
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(failed ? 1 : 0);
