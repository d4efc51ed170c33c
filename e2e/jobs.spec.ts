// Following and steering Infra Jobs in the console, as an engineer would, against the real server,
// the hosted runner and the builtin engine. A StaticSite module with a test gate holds apply open
// while a test watches it stream, reloads mid-stream and cancels while it runs; the test releases it.
import { createHash } from "node:crypto";
import fs from "node:fs";
import { expect, test, type Page } from "@playwright/test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { iacModules, organizations } from "../db/schema";
import { newId } from "../lib/ids";
import { systemActor } from "../server/actor";
import { draftComponent } from "../test/components";
import { setFlowControlPolicy } from "../server/services/settings/flow-control";
import { addMember } from "./db";
import { e2eGates, e2eState, expectPreflightPassed, gatedStaticSiteModule, screenshot, signIn } from "./support";

// Each test waits on real runs; a loaded machine needs more than the default.
test.describe.configure({ mode: "serial", timeout: 240_000 });
const gates = e2eGates();

const ENGINEER = { email: "engineer@jobs.example", password: "engineer-password-1" };
const VIEWER = { email: "viewer@jobs.example", password: "viewer-password-1" };
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

test.beforeAll(async () => {
  const s = e2eState();
  // The platform's static-site module plus a test gate the site's files wait for (named by the
  // site): it passes at once unless a test holds it, so a test can act while apply is in flight.
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  try {
    const [org] = await h.db.select().from(organizations).where(eq(organizations.slug, "acme"));
    await h.db.insert(iacModules).values({ id: newId("iacModule"), orgId: org.id, scopeKey: org.id, kind: "StaticSite", name: "static-site-gated", provisioner: "builtin" as const, version: "1.0.1", source: gatedStaticSiteModule(s.dataDir, "static-site-gated") });
    await draftComponent(h.db, systemActor(org.id), { environment: "dev", kind: "StaticSite", name: "reload-site", spec: { site_name: "reload", title: "reload" }, connection: "local-sandbox" });
    await draftComponent(h.db, systemActor(org.id), { environment: "dev", kind: "StaticSite", name: "cancel-site", spec: { site_name: "cancel", title: "cancel" }, connection: "local-sandbox" });
  } finally {
    await h.close();
  }
  await addMember("acme", "engineer", ENGINEER.email, ENGINEER.password);
  await addMember("acme", "viewer", VIEWER.email, VIEWER.password);
});

const step = (page: Page, name: string) => page.getByTestId(`step-state-${name}`);
const openStep = (page: Page, name: string) => page.locator(`li[data-step="${name}"] > button`).click();
const logText = (page: Page, name: string) => page.getByTestId(`log-text-${name}`);

async function openComponent(page: Page, name: string) {
  await page.goto(`${e2eState().baseURL}/o/acme/components`);
  await page.getByRole("link", { name, exact: true }).click();
  await expect(page.getByRole("heading", { name: new RegExp(name) })).toBeVisible();
}

async function runJob(page: Page, operation: string, message: string, component?: string) {
  await page.getByRole("button", { name: "Run job" }).first().click();
  const dialog = page.getByRole("dialog");
  if (component) await dialog.getByLabel("Infra Component").selectOption({ label: component });
  await dialog.getByRole("radio", { name: new RegExp(`^${operation}`) }).check();
  await dialog.getByLabel("Version message").fill(message);
  // The four essentials, the runner, the connection's authorization, and the spec's secrets.
  await expectPreflightPassed(dialog);
  await dialog.getByRole("button", { name: new RegExp(`^Run ${operation.toLowerCase()}`) }).click();
  await expect(page).toHaveURL(/\/o\/acme\/jobs\/job_/);
  return page.url().split("/").pop()!;
}

/** The job's log lines for a step, as the API stores them. */
async function storedLogLines(page: Page, jobId: string, stepName: string): Promise<string[]> {
  const input = encodeURIComponent(JSON.stringify({ json: { org: "acme", id: jobId, after: 0, limit: 5000 } }));
  const res = await page.request.get(`${e2eState().baseURL}/api/trpc/jobs.events?input=${input}`);
  expect(res.ok()).toBe(true);
  const { events } = (await res.json()).result.data.json as { events: { seq: number; operation: string | null; type: string; payload: { line?: string } }[] };
  const seqs = events.map((e) => e.seq);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  return events.filter((e) => e.operation === stepName && e.type === "log").flatMap((e) => String(e.payload.line).replace(ANSI, "").replace(/\r?\n$/, "").split(/\r?\n/));
}

test("an engineer runs an update on prod marketing-site, watches it pause, approves the reviewed plan and sees apply stream to success", async ({ page }) => {
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await openComponent(page, "marketing-site");
  await runJob(page, "Update", "Ship the new landing page");

  await expect(page.getByText("Ship the new landing page")).toBeVisible();
  await expect(step(page, "init")).toHaveText("Succeeded");
  await openStep(page, "init");
  await expect(logText(page, "init")).toContainText("Initialized the builtin engine");
  await expect(step(page, "refresh")).toHaveText("Succeeded");
  await expect(step(page, "preview")).toHaveText("Succeeded");
  await expect(page.getByTestId("job-status")).toHaveText("Awaiting approval");
  await expect(step(page, "apply")).toHaveText("Awaiting approval");
  await expect(page.getByRole("link", { name: /Infra Jobs/ }).first()).toContainText("1");

  await openStep(page, "preview");
  await expect(page.getByRole("region", { name: "Resource changes" }).getByText("plantontest_gate.settle")).toBeVisible();
  gates.hold("www");
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByText("6 to create")).toBeVisible();
  await expect(dialog.getByRole("list", { name: "Resources to change" })).toContainText("local_file.index");
  await expect(dialog.getByTestId("plan-checksum")).toHaveText(/^[0-9a-f]{64}$/);
  await dialog.getByLabel("Note for the record (optional)").fill("Reviewed with marketing");
  await screenshot(page, "job-paused");
  await dialog.getByRole("button", { name: "Approve and apply" }).click();

  await gates.held("www");
  await expect(step(page, "apply")).toHaveText("Running");
  await openStep(page, "apply");
  await expect(logText(page, "apply")).toContainText("plantontest_gate.settle: Creating");
  await expect(page.getByTestId("job-status")).toHaveText("Running");
  // The job page scrolls inside its own pane: nothing in it (the logs' screen-reader text) makes the whole page scroll into blank space below the shell.
  expect(await page.evaluate(() => document.documentElement.scrollHeight - window.innerHeight)).toBeLessThanOrEqual(0);
  await screenshot(page, "job-running");
  gates.release("www");
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 60_000 });
  await expect(step(page, "apply")).toHaveText("Succeeded");
  await expect(logText(page, "apply")).toContainText("Apply complete!");
  await expect(page.getByRole("heading", { name: "Outputs" })).toBeVisible();
  await expect(page.getByText("site_path", { exact: true })).toBeVisible();
  await expect(page.getByText(/approved .* the plan/)).toBeVisible();
  await expect(page.getByText("Reviewed with marketing")).toBeVisible();
  // The ended job's log is archived within seconds, and the page shows it without a reload; the download is that file.
  const archive = page.getByTestId("job-log-archive");
  await expect(archive).toContainText("job.log", { timeout: 30_000 });
  const [download] = await Promise.all([page.waitForEvent("download"), archive.getByRole("link", { name: "job.log" }).click()]);
  const saved = fs.readFileSync(await download.path(), "utf8");
  expect(saved).toContain("Apply complete!");
  await expect(archive).toContainText(`sha256 ${createHash("sha256").update(saved).digest("hex").slice(0, 12)}`);
  await screenshot(page, "job-finished");
});

test("reloading mid-stream, the log pane carries on without gaps or repeats", async ({ page }) => {
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await page.goto(`${e2eState().baseURL}/o/acme/jobs`);
  gates.hold("reload");
  const jobId = await runJob(page, "Update", "Reload while it streams", "reload-site (dev)");
  await gates.held("reload");
  await expect(step(page, "apply")).toHaveText("Running");
  await openStep(page, "apply");
  await expect(logText(page, "apply")).toContainText("plantontest_gate.settle: Creating");
  const before = (await logText(page, "apply").textContent())!;

  await page.reload();
  await expect(page.getByTestId("job-status")).toHaveText("Running");
  await openStep(page, "apply");
  await expect(logText(page, "apply")).toContainText(before.trim().split("\n")[0]);
  gates.release("reload");
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 120_000 });
  await expect(logText(page, "apply")).toContainText("Apply complete!");

  const shown = (await logText(page, "apply").textContent())!.replace(/\n$/, "").split("\n");
  expect(shown).toEqual(await storedLogLines(page, jobId, "apply"));
  expect(shown.join("\n").startsWith(before.replace(/\n$/, ""))).toBe(true);
});

test("cancelling a running job lets the in-flight step finish; a queued job behind it and a paused job end at once with their steps cancelled", async ({ page }) => {
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await openComponent(page, "cancel-site");
  gates.hold("cancel");
  const running = await runJob(page, "Update", "Will be cancelled while applying");
  await gates.held("cancel");
  await expect(step(page, "apply")).toHaveText("Running");

  // Cancel at once, while apply (the last operation) is in flight: it runs to its end, and with
  // nothing left to stop the job succeeds, its record saying the cancel came too late.
  await page.getByRole("button", { name: "Cancel job" }).click();
  await expect(page.getByRole("dialog")).toContainText("runs to its end, so no resource is left half-changed");
  await page.getByRole("dialog").getByRole("button", { name: "Cancel job" }).click();
  await expect(page.getByText(/Cancel requested by/)).toBeVisible();
  await expect(page.getByRole("button", { name: "Cancelling…" })).toBeDisabled();

  // Meanwhile a second job on the same component waits in its queue behind the one still applying.
  await openComponent(page, "cancel-site");
  const queued = await runJob(page, "Preview", "Waits behind the apply");
  expect(queued).not.toBe(running);
  await expect(page.getByTestId("job-status")).toHaveText("Queued");
  await page.getByRole("button", { name: "Cancel job" }).click();
  await expect(page.getByRole("dialog")).toContainText("it ends now as cancelled");
  await page.getByRole("dialog").getByRole("button", { name: "Cancel job" }).click();
  await expect(page.getByTestId("job-result")).toHaveText("Cancelled");
  for (const s of ["init", "refresh", "preview"]) await expect(step(page, s)).toHaveText("Cancelled");

  gates.release("cancel");
  await page.goto(`${e2eState().baseURL}/o/acme/jobs/${running}`);
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  await expect(page.getByText(/came too late/)).toBeVisible();
  await expect(step(page, "apply")).toHaveText("Succeeded");
  await openStep(page, "apply");
  await expect(logText(page, "apply")).toContainText("Apply complete!");

  // A prod job paused for approval: cancelling it marks apply cancelled, nothing more runs.
  await openComponent(page, "marketing-site");
  await runJob(page, "Update", "Paused, then cancelled");
  await expect(page.getByTestId("job-status")).toHaveText("Awaiting approval", { timeout: 30_000 });
  await page.getByRole("button", { name: "Cancel job" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Cancel job" }).click();
  await expect(page.getByTestId("job-result")).toHaveText("Cancelled");
  await expect(step(page, "preview")).toHaveText("Succeeded");
  await expect(step(page, "apply")).toHaveText("Cancelled");
});

test("rerun makes a new job linked to the completed one, and the component's Infra Jobs tab lists both", async ({ page }) => {
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await openComponent(page, "docs-site");
  const first = await runJob(page, "Preview", "First preview");
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 60_000 });
  await page.getByRole("button", { name: "Rerun" }).click();
  await expect(page).not.toHaveURL(new RegExp(first));
  await expect(page.getByRole("link", { name: first })).toBeVisible();
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 60_000 });
  const second = page.url().split("/").pop()!;

  await openComponent(page, "docs-site");
  await page.getByRole("tab", { name: "Infra Jobs" }).click();
  const table = page.getByRole("table", { name: "Component jobs" });
  await expect(table.locator(`tr[data-job-id="${second}"]`)).toBeVisible();
  await expect(table.locator(`tr[data-job-id="${first}"]`)).toBeVisible();
  await expect(page.getByText("Nothing is queued.")).toBeVisible();
});

test("the jobs list filters by the URL and a paused job is approved from the list without opening it", async ({ page }) => {
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await openComponent(page, "marketing-site");
  const jobId = await runJob(page, "Update", "Approve me from the list");
  await expect(page.getByTestId("job-status")).toHaveText("Awaiting approval", { timeout: 30_000 });

  await page.getByRole("link", { name: /Infra Jobs/ }).first().click();
  await page.getByLabel("Status").selectOption("awaiting_approval");
  await expect(page).toHaveURL(/status=awaiting_approval/);
  const row = page.locator(`tr[data-job-id="${jobId}"]`);
  await expect(row).toBeVisible();
  await expect(page.locator("tr[data-job-id]")).toHaveCount(1);
  await screenshot(page, "jobs-list");
  await row.getByRole("button", { name: "Approve" }).click();
  await expect(page.getByRole("dialog").getByTestId("plan-checksum")).toHaveText(/^[0-9a-f]{64}$/);
  await page.getByRole("dialog").getByRole("button", { name: "Approve and apply" }).click();
  await expect(row).toHaveCount(0);
  await page.getByLabel("Status").selectOption("");
  await expect(page.locator(`tr[data-job-id="${jobId}"]`)).toContainText("Succeeded", { timeout: 60_000 });
});

test("a preview whose refresh a policy skips says on its step that deletes could not be computed", async ({ page }) => {
  const h = await openDatabase({ url: e2eState().dbUrl, migrate: false });
  try {
    const [org] = await h.db.select().from(organizations).where(eq(organizations.slug, "acme"));
    const quick = await draftComponent(h.db, systemActor(org.id), { environment: "dev", kind: "StaticSite", name: "quick-site", spec: { site_name: "quick", title: "quick" }, connection: "local-sandbox" });
    await signIn(page, ENGINEER.email, ENGINEER.password);
    // Deployed first: a plan against no state computes every delete (there is nothing to delete).
    await openComponent(page, "quick-site");
    await runJob(page, "Update", "First deploy");
    await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 120_000 });
    await setFlowControlPolicy(h.db, systemActor(org.id), { selector: "component", target: quick.id, toggles: { manualStart: false, skipRefresh: true, previewBeforeApply: true, pauseBeforeApply: false, protectDeletes: false } });
  } finally {
    await h.close();
  }
  await openComponent(page, "quick-site");
  await runJob(page, "Preview", "A quick look without refresh");
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 120_000 });
  await openStep(page, "preview");
  await expect(page.getByTestId("deletes-not-computed")).toContainText("Refresh was skipped, so deletes of things already gone could not be computed");
  // The record names the module version it ran and its registry, and each attempt its credential.
  await expect(page.getByTestId("job-module")).toHaveText("static-site-gated@1.0.1");
  await expect(page.getByText("organization registry", { exact: true })).toBeVisible();
  await expect(page.getByRole("table", { name: "Runner attempts" })).toContainText(/jcr_/);
  await expect(logText(page, "preview")).toContainText("Outputs:");
  await screenshot(page, "job-preview-no-refresh");
});

test("a viewer sees jobs but no action buttons", async ({ page }) => {
  await signIn(page, VIEWER.email, VIEWER.password);
  await page.goto(`${e2eState().baseURL}/o/acme/jobs`);
  await expect(page.locator("tr[data-job-id]").first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Run job" })).toHaveCount(0);
  await page.locator("tr[data-job-id] a").first().click();
  await expect(page).toHaveURL(/\/jobs\/job_/);
  await expect(page.getByRole("heading", { name: "Steps" })).toBeVisible();
  for (const name of ["Approve", "Cancel job", "Rerun", "Run job"]) await expect(page.getByRole("button", { name })).toHaveCount(0);
  await openComponent(page, "marketing-site");
  await expect(page.getByRole("button", { name: "Run job" })).toHaveCount(0);
});
