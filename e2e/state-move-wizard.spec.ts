// The move off Planton-managed storage in the browser, as an admin runs it: destinations with their
// access test, the dry run, the move live (held mid-way so a reload shows it still running), the
// result, and "Nothing left on Planton-managed storage". Its own organization, so the states other
// specs keep on Planton-managed storage stay where they are. The destination is S3 on s3rver.
import path from "node:path";
import { expect, test, type Page } from "@playwright/test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { users } from "../db/schema";
import type { Actor } from "../server/actor";
import { createComponent } from "../server/services/components/create-component";
import { createJob } from "../server/services/jobs/create-job";
import { getJob } from "../server/services/jobs/queries";
import { createOrganization } from "../server/services/organizations/create-organization";
import { localInfraBase } from "../server/services/runners/hosted";
import { createConnection, setConnectionAuthorizations } from "../server/services/settings/connections";
import { createStateBackend } from "../server/services/state-backends/create-backend";
import { startS3rver, type S3Server } from "../test/object-stores";
import { addMember } from "./db";
import { e2eGates, e2eState, screenshot, signIn } from "./support";

test.describe.configure({ mode: "serial", timeout: 240_000 });

const ORG = "move-off";
const SITES = ["alpha-site", "beta-site", "gamma-site", "delta-site"];
const VIEWER = { email: "viewer@move-off.example", password: "viewer-password-1" };
const SECOND_ADMIN = { email: "second-admin@move-off.example", password: "second-admin-password-1" };
const gates = e2eGates();
let s3: S3Server;

const wizardUrl = () => `${e2eState().baseURL}/o/${ORG}/settings/state-backends/move`;

test.beforeAll(async () => {
  const s = e2eState();
  // Credentials are sealed with the console's key, which lives in its data folder.
  process.env.PLANTON_DATA_DIR = s.dataDir;
  s3 = await startS3rver();
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  try {
    const [admin] = await h.db.select().from(users).where(eq(users.email, s.email));
    const org = await createOrganization(h.db, { slug: ORG, name: "Move Off Inc", environments: ["dev", "staging"], adminUserId: admin.id, adminLabel: s.email });
    const actor: Actor = { userId: admin.id, label: s.email, orgId: org.id, role: "admin" };
    const local = await createConnection(h.db, actor, { name: "local-files", provider: "local", config: { root: path.join(localInfraBase(s.dataDir), ORG) } });
    await setConnectionAuthorizations(h.db, actor, { id: local.id, organization: true });
    await createConnection(h.db, actor, { name: "s3rver", provider: "aws", config: { region: s3.region }, credentials: { access_key_id: "S3RVER", secret_access_key: "S3RVER" } });
    await createStateBackend(h.db, actor, { name: "own-s3", kind: "s3", config: { bucket: s3.bucket, endpoint: s3.endpoint, key_prefix: "planton/" }, connection: "s3rver" });
    // Real states on Planton-managed storage: each site's update job runs on the hosted runner.
    const jobs: string[] = [];
    for (const [i, name] of SITES.entries()) {
      const component = await createComponent(h.db, actor, { environment: i % 2 ? "staging" : "dev", kind: "StaticSite", name, spec: { site_name: name, title: name }, connection: "local-files" });
      jobs.push((await createJob(h.db, actor, { componentId: component.id, operation: "update" })).id);
    }
    for (const id of jobs) {
      await expect.poll(async () => (await getJob(h.db, org.id, id)).result, { timeout: 120_000, message: `update job ${id} succeeds` }).toBe("succeeded");
    }
  } finally {
    await h.close();
  }
  await addMember(ORG, "viewer", VIEWER.email, VIEWER.password);
  await addMember(ORG, "admin", SECOND_ADMIN.email, SECOND_ADMIN.password);
});

test.afterAll(async () => {
  gates.release("state-move");
  await s3?.stop();
});

/** The destination step: choose own-s3 for builtin states and wait for its access test to pass. */
async function chooseDestination(page: Page) {
  const builtin = page.getByTestId("destination-builtin");
  await builtin.getByLabel("Destination for builtin states").selectOption("own-s3");
  await expect(builtin.getByTestId("access-test")).toContainText("passed");
}

test("a viewer sees the wizard read-only, with a note saying who can move states", async ({ page }) => {
  await signIn(page, VIEWER.email, VIEWER.password);
  await page.goto(wizardUrl());
  await expect(page.getByRole("heading", { name: "Move off Planton-managed storage" })).toBeVisible();
  await expect(page.getByText("Moving states, retrying and rolling back needs the admin role")).toBeVisible();
  await expect(page.getByLabel("Destination for builtin states")).toBeDisabled();
  await expect(page.getByRole("button", { name: /Review the dry run/ })).toHaveCount(0);
  await screenshot(page, "state-move-wizard-viewer");
});

test("an admin moves every state off Planton-managed storage to S3, watching it live through a reload", async ({ page, browser }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await page.goto(wizardUrl());

  // 1) Destination, with its access test's steps.
  await expect(page.getByTestId("destination-builtin")).toContainText(`${SITES.length} states`);
  await chooseDestination(page);
  await expect(page.getByTestId("access-test")).toContainText("Read it back");
  await screenshot(page, "state-move-wizard-1-destinations");

  // 2) The dry run: one row per site, its keys and totals; nothing moved yet.
  await page.getByRole("button", { name: "Review the dry run" }).click();
  const dryRun = page.getByRole("table", { name: "Dry run" });
  await expect(dryRun.getByTestId("dry-run-item")).toHaveCount(SITES.length);
  for (const name of SITES) await expect(dryRun.getByRole("row").filter({ hasText: name })).toContainText("own-s3:");
  await expect(page.getByTestId("dry-run-totals")).toHaveText(`Total: ${SITES.length} states`);
  await screenshot(page, "state-move-wizard-2-review");

  // A second admin reaches the same review, to try a second start while the first move runs.
  const second = await browser.newPage();
  await signIn(second, SECOND_ADMIN.email, SECOND_ADMIN.password);
  await second.goto(wizardUrl());
  await chooseDestination(second);
  await second.getByRole("button", { name: "Review the dry run" }).click();
  await expect(second.getByTestId("dry-run-item")).toHaveCount(SITES.length);

  // 3) The move, held after its first component until the test lets it go on.
  gates.hold("state-move");
  await page.getByRole("button", { name: /Start the move/ }).click();
  const bar = page.getByTestId("move-progress");
  await expect(bar).toBeVisible();
  await gates.held("state-move");
  await expect(page.getByRole("heading", { name: "3. Moving" })).toBeVisible();
  const before = Number(await bar.getAttribute("aria-valuenow"));
  expect(before).toBeLessThan(SITES.length);
  await screenshot(page, "state-move-wizard-3-moving");

  // Reloading mid-move shows the same move still running.
  await page.reload();
  await expect(page.getByRole("heading", { name: "3. Moving" })).toBeVisible();
  await expect(page.getByTestId("move-progress")).toHaveAttribute("aria-valuemax", String(SITES.length));
  await expect(page.getByTestId("move-item")).toHaveCount(SITES.length);

  // The second admin is told a move runs; starting another is refused with the server's words.
  await expect(second.getByRole("status").filter({ hasText: "is running" })).toBeVisible();
  await second.getByRole("button", { name: /Start the move/ }).click();
  await expect(second.getByRole("alert")).toContainText(/move/i);
  await screenshot(second, "state-move-wizard-second-start-refused");
  await second.getByRole("button", { name: "Show the running move" }).click();
  await expect(second.getByRole("heading", { name: "3. Moving" })).toBeVisible();

  // The bar moves as the watch reports each component, with no reload.
  gates.release("state-move");
  await expect(page.getByTestId("move-progress")).toHaveAttribute("aria-valuenow", String(SITES.length), { timeout: 60_000 });

  // 4) The result, on both admins' pages.
  await expect(page.getByTestId("move-result")).toContainText(`${SITES.length} of ${SITES.length} states moved`);
  await expect(page.getByText("Nothing left on Planton-managed storage")).toBeVisible();
  await expect(page.getByTestId("move-item").filter({ hasText: "moved" })).toHaveCount(SITES.length);
  await expect(second.getByText("Nothing left on Planton-managed storage")).toBeVisible();
  await screenshot(page, "state-move-wizard-4-result");
  await second.close();

  // Leaving and coming back shows where it stands.
  await page.goto(`${s.baseURL}/o/${ORG}/settings/connections`);
  await page.goto(wizardUrl());
  await expect(page.getByText("Nothing left on Planton-managed storage")).toBeVisible();
});
