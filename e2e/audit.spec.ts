// The audit record as a manager (viewer role) reads it: real history made in its own organization (an
// engineer approves a prod update in the browser; other jobs, a cancel, a component change and a
// preflight refusal around it), then the viewer filters to "approvals in prod in the last 7 days",
// opens the one approval, follows it to the job and back, exports the view, verifies the chain and
// finds the approval on the job's and the component's Activity tabs.
import fs from "node:fs";
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { users } from "../db/schema";
import { AUDIT_CSV_COLUMNS } from "../lib/api/audit-schemas";
import type { Actor } from "../server/actor";
import { draftComponent, reconfigure } from "../test/components";
import { cancelJob } from "../server/services/jobs/cancel-job";
import { createJob } from "../server/services/jobs/create-job";
import { getJob } from "../server/services/jobs/queries";
import { createOrganization } from "../server/services/organizations/create-organization";
import { localInfraBase } from "../server/services/runners/hosted";
import { createConnection, setConnectionAuthorizations } from "../server/services/settings/connections";
import { setFlowControlPolicy } from "../server/services/settings/flow-control";
import { createVariable } from "../server/services/settings/secrets";
import { addMember } from "./db";
import { e2eState, screenshot, signIn } from "./support";

test.describe.configure({ mode: "serial", timeout: 240_000 });

const ORG = "audit-e2e";
const ENGINEER = { email: "engineer@audit.example", password: "engineer-password-1" };
const VIEWER = { email: "manager@audit.example", password: "manager-password-1" };
const NOTE = "Reviewed the ledger plan with finance";
let approvedJob = "";
let componentId = "";
let adminActor: Actor;

test.beforeAll(async () => {
  const s = e2eState();
  process.env.PLANTON_DATA_DIR = s.dataDir;
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  try {
    const [admin] = await h.db.select().from(users).where(eq(users.email, s.email));
    const org = await createOrganization(h.db, { slug: ORG, name: "Audit Inc", environments: ["dev", "prod"], adminUserId: admin.id, adminLabel: s.email });
    adminActor = { userId: admin.id, label: s.email, orgId: org.id, role: "admin" };
    const local = await createConnection(h.db, adminActor, { name: "local-files", provider: "local", config: { root: path.join(localInfraBase(s.dataDir), ORG) } });
    await setConnectionAuthorizations(h.db, adminActor, { id: local.id, organization: true });
    await setFlowControlPolicy(h.db, adminActor, { selector: "environment", target: "prod", toggles: { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: true, protectDeletes: false } });
    const ledger = await draftComponent(h.db, adminActor, { environment: "prod", kind: "StaticSite", name: "ledger-site", spec: { site_name: "ledger", title: "Ledger" }, connection: "local-files" });
    const sandbox = await draftComponent(h.db, adminActor, { environment: "dev", kind: "StaticSite", name: "sandbox-site", spec: { site_name: "sandbox", title: "Sandbox" }, connection: "local-files" });
    // No connection: its job is refused by preflight (a failure in the record).
    const orphan = await draftComponent(h.db, adminActor, { environment: "dev", kind: "StaticSite", name: "orphan-site", spec: { site_name: "orphan", title: "Orphan" } });
    componentId = ledger.id;

    await addMember(ORG, "engineer", ENGINEER.email, ENGINEER.password);
    await addMember(ORG, "viewer", VIEWER.email, VIEWER.password);
    const [eng] = await h.db.select().from(users).where(eq(users.email, ENGINEER.email));
    const engineer: Actor = { userId: eng.id, label: ENGINEER.email, orgId: org.id, role: "engineer" };
    await reconfigure(h.db, engineer, { id: ledger.id, spec: { site_name: "ledger", title: "Ledger (finance)" } });
    approvedJob = (await createJob(h.db, engineer, { componentId: ledger.id, operation: "update", versionMessage: "Ship the ledger title" })).id;
    await createJob(h.db, engineer, { componentId: sandbox.id, operation: "preview" });
    await createJob(h.db, engineer, { componentId: orphan.id, operation: "preview" });
    await expect.poll(async () => (await getJob(h.db, org.id, approvedJob)).status, { timeout: 120_000, message: "the prod update pauses for approval" }).toBe("awaiting_approval");
    // A second prod update, cancelled while it waits behind the first: a prod job event that is not an approval.
    const cancelled = await createJob(h.db, engineer, { componentId: ledger.id, operation: "update", versionMessage: "Not this one" });
    await cancelJob(h.db, engineer, { jobId: cancelled.id });
  } finally {
    await h.close();
  }
});

const events = (page: Page) => page.getByRole("table", { name: "Audit events" }).locator("tr[data-audit-seq]");

test("a manager filters to approvals in prod last week, opens one, follows it to the job, exports the view and verifies the record", async ({ browser }) => {
  const s = e2eState();
  // The engineer approves the paused prod update in the browser, as on the job page.
  const engineerContext = await browser.newContext();
  const engineer = await engineerContext.newPage();
  await signIn(engineer, ENGINEER.email, ENGINEER.password);
  await engineer.goto(`${s.baseURL}/o/${ORG}/jobs/${approvedJob}`);
  await engineer.getByRole("button", { name: "Approve", exact: true }).click();
  await engineer.getByRole("dialog").getByLabel("Note for the record (optional)").fill(NOTE);
  await engineer.getByRole("dialog").getByRole("button", { name: "Approve and apply" }).click();
  await expect(engineer.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  await engineerContext.close();

  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, VIEWER.email, VIEWER.password);
  await page.goto(`${s.baseURL}/o/${ORG}/components`);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit" }).click();
  await expect(page).toHaveURL(new RegExp(`/o/${ORG}/audit$`));
  await expect(page.getByRole("heading", { name: "Audit" })).toBeVisible();
  await expect(events(page).first()).toBeVisible();
  // The preflight refusal is marked as a failure.
  await expect(page.locator('tr[data-audit-seq][data-result="failure"]').first()).toContainText("Failure");

  // Live: an event made now appears without a reload.
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  try {
    await createVariable(h.db, adminActor, { name: "LEDGER_REGION", value: "eu-west-1" });
  } finally {
    await h.close();
  }
  await expect(events(page).first()).toContainText("LEDGER_REGION");
  await screenshot(page, "audit");

  // A search that matches nothing: the empty state, and its way out.
  await page.getByLabel("Search").fill("nothing-here-matches");
  await expect(page.getByText("No events match these filters")).toBeVisible();
  await expect(page).toHaveURL(/q=nothing-here-matches/);
  await screenshot(page, "audit-empty");
  await page.getByRole("main").getByRole("button", { name: "Clear filters" }).last().click();
  await expect(events(page).first()).toBeVisible();
  await expect(page.getByLabel("Search")).toHaveValue("");

  // Approvals in prod, last 7 days: exactly the engineer's approval.
  await page.getByLabel("Action").selectOption("job.approve");
  await page.getByLabel("Environment").selectOption("prod");
  await page.getByLabel("Time").selectOption("7d");
  await expect(page).toHaveURL(/action=job\.approve/);
  await expect(page).toHaveURL(/environment=prod/);
  await expect(page).toHaveURL(/range=7d/);
  await expect(events(page)).toHaveCount(1);
  const row = events(page).first();
  await expect(row).toHaveAttribute("data-action", "job.approve");
  await expect(row).toContainText(ENGINEER.email);
  await expect(row).toContainText("Approved a job");
  // The view survives a reload (the filters live in the URL).
  await page.reload();
  await expect(page.getByLabel("Action")).toHaveValue("job.approve");
  await expect(events(page)).toHaveCount(1);
  await screenshot(page, "audit-filtered");

  // Open it: its full detail, then its link to the job.
  const toggle = row.getByRole("button", { name: /^Details of event/ });
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  const detail = page.getByRole("region", { name: /^Event \d+$/ });
  await expect(detail).toContainText(NOTE);
  await expect(detail.locator('tr[data-field="planSha256"]')).toContainText(/[0-9a-f]{64}/);
  await expect(detail).toContainText(/Hash\s*[0-9a-f]{64}/);
  await expect(detail).toContainText(/Previous hash\s*[0-9a-f]{64}/);
  await screenshot(page, "audit-event");
  await detail.getByRole("link", { name: "Open the job" }).click();
  await expect(page).toHaveURL(new RegExp(`/o/${ORG}/jobs/${approvedJob}$`));
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded");
  await page.goBack();
  await expect(page).toHaveURL(new RegExp(`/o/${ORG}/audit\\?`));
  await expect(page.getByLabel("Action")).toHaveValue("job.approve");
  await expect(events(page)).toHaveCount(1);

  // Export the view: the CSV holds the header and the approval's row, nothing else.
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Export CSV" }).click()]);
  expect(download.suggestedFilename()).toMatch(new RegExp(`^audit-${ORG}-.*\\.csv$`));
  const csv = fs.readFileSync((await download.path())!, "utf8").trim().split(/\r?\n/);
  expect(csv[0]).toBe(AUDIT_CSV_COLUMNS.join(","));
  expect(csv).toHaveLength(2);
  expect(csv[1]).toContain("job.approve");
  expect(csv[1]).toContain(approvedJob);
  expect(csv[1]).toContain(ENGINEER.email);

  // Verify: the chain holds, with its head hash to keep.
  await page.getByRole("button", { name: "Verify the record" }).click();
  const verdict = page.getByTestId("audit-verify").getByRole("status");
  await expect(verdict).toContainText(/The record holds: \d+ events checked/);
  await expect(page.getByLabel(/^Head hash/)).toHaveValue(/^[0-9a-f]{64}$/);
  await screenshot(page, "audit-verify");

  // The job's Activity tab, and the component's (its events and its jobs').
  await page.goto(`${s.baseURL}/o/${ORG}/jobs/${approvedJob}`);
  await page.getByRole("tab", { name: "Activity" }).click();
  const activity = page.getByRole("table", { name: "Activity" }).locator("tr[data-audit-seq]");
  await expect(activity.and(page.locator('[data-action="job.approve"]'))).toHaveCount(1);
  await expect(activity.and(page.locator('[data-action="job.create"]'))).toHaveCount(1);
  await expect(page.getByRole("link", { name: "Open in Audit" })).toHaveAttribute("href", `/o/${ORG}/audit?target=${approvedJob}`);
  await screenshot(page, "job-activity");
  await page.goto(`${s.baseURL}/o/${ORG}/components/${componentId}`);
  await page.getByRole("tab", { name: "Activity" }).click();
  await expect(page).toHaveURL(/tab=activity/);
  await expect(activity.and(page.locator('[data-action="job.approve"]'))).toHaveCount(1);
  await expect(activity.and(page.locator('[data-action="job.cancel"]'))).toHaveCount(1);
  await expect(activity.and(page.locator('[data-action="component.update"]'))).toHaveCount(1);
  await screenshot(page, "component-activity");
  await page.getByRole("link", { name: "Open in Audit" }).click();
  await expect(page).toHaveURL(new RegExp(`/o/${ORG}/audit\\?component=${componentId}$`));
  await expect(page.getByText(/Only component .* and its jobs/)).toBeVisible();
  await expect(events(page).and(page.locator('[data-action="job.approve"]'))).toHaveCount(1);
  await context.close();
});
