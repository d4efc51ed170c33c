// Settings → State Backends: an admin creates an S3 backend on s3rver (after a failing access test for
// a bucket that does not exist saved nothing), makes it the builtin default, and a viewer sees it all
// read-only. Its own organization, so no other spec's jobs follow this default.
import path from "node:path";
import { expect, test } from "@playwright/test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { users } from "../db/schema";
import { storedStateOf } from "../state-backends/rules";
import { draftComponent } from "../test/components";
import { createOrganization } from "../server/services/organizations/create-organization";
import { createConnection } from "../server/services/settings/connections";
import { PlantonManagedStore, plantonManagedKey, plantonStateBytes } from "../server/services/state-backends/planton-managed-store";
import { startS3rver, type S3Server } from "../test/object-stores";
import { addMember } from "./db";
import { e2eState, screenshot, signIn } from "./support";

const SLUG = "backends-e2e";
const VIEWER = { email: "viewer-backends@example.test", password: "viewer-backends-pass-1" };
let s3: S3Server;
let orgId: string;

test.beforeAll(async () => {
  s3 = await startS3rver("e2e-states");
  const h = await openDatabase({ url: e2eState().dbUrl, migrate: false });
  try {
    const [admin] = await h.db.select().from(users).where(eq(users.email, e2eState().email));
    const org = await createOrganization(h.db, { slug: SLUG, name: "Backends E2E", environments: ["dev", "prod"], adminUserId: admin.id, adminLabel: admin.email });
    orgId = org.id;
    const actor = { userId: admin.id, label: admin.email, orgId: org.id, role: "admin" as const };
    await createConnection(h.db, actor, { name: "files", provider: "local", config: { root: "/tmp/planton-e2e-backends" } });
    // Two states already on Planton-managed storage, as jobs would have left them.
    const store = new PlantonManagedStore(h.db, org.id);
    for (const [env, name, serial] of [["dev", "web", 4], ["prod", "api", 9]] as const) {
      const c = await draftComponent(h.db, actor, { environment: env, kind: "StaticSite", name, spec: { site_name: name }, connection: "files" });
      const doc = { version: 4, terraform_version: "builtin-0.1.0", serial, lineage: `lin-${name}`, outputs: {}, resources: [] };
      await store.write(plantonManagedKey(org.id, c.id), storedStateOf(plantonStateBytes(doc)));
    }
  } finally {
    await h.close();
  }
  await addMember(SLUG, "viewer", VIEWER.email, VIEWER.password);
});

test.afterAll(async () => {
  await s3?.stop();
});

test("an admin creates an S3 backend after a failing access test saved nothing, makes it the builtin default; a viewer sees it read-only", async ({ page, browser }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  // The aws connection with s3rver's well-known keys, as an admin adds one.
  await page.goto(`${s.baseURL}/o/${SLUG}/settings/connections`);
  await page.getByRole("button", { name: "New connection" }).click();
  const connection = page.getByRole("dialog");
  await connection.getByLabel("Name").fill("s3rver");
  await connection.getByLabel("Provider").selectOption({ label: "AWS" });
  await connection.getByLabel("region").fill(s3.region);
  await connection.getByLabel("access_key_id").fill(s3.credentials.accessKeyId);
  await connection.getByLabel("secret_access_key").fill(s3.credentials.secretAccessKey);
  await connection.getByRole("button", { name: "Create connection" }).click();
  await expect(page.getByRole("dialog")).toContainText("Who may use s3rver?");
  await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();

  await page.getByRole("link", { name: "State Backends" }).first().click();
  await expect(page).toHaveURL(new RegExp(`/o/${SLUG}/settings/state-backends$`));
  await expect(page.getByRole("heading", { name: "State Backends" })).toBeVisible();
  const table = page.getByRole("table", { name: "State backends" });
  await expect(table.getByRole("row", { name: /planton-managed/ })).toContainText("Planton-managed");
  const usage = page.getByTestId("move-off-card");
  await expect(usage).toContainText("2 states");
  await expect(usage.getByRole("link", { name: "Move off Planton-managed storage" })).toHaveAttribute("href", `/o/${SLUG}/settings/state-backends/move`);
  await expect(page.getByRole("table", { name: "States on Planton-managed storage" }).getByRole("row")).toHaveCount(3);

  // A local directory outside the organization's folder (and any the operator allows) is refused beside the field,
  // naming the folder it may use; in that folder it is created.
  await page.getByRole("button", { name: "New state backend" }).click();
  const dialog = page.getByRole("dialog");
  const own = path.join(s.dataDir, "local-states", orgId);
  await dialog.getByLabel("Name").fill("e2e-files");
  await dialog.getByLabel("Kind").selectOption({ label: "Local directory" });
  await dialog.getByLabel("path").fill("/etc/planton-states");
  await dialog.getByRole("button", { name: "Test and create" }).click();
  await expect(dialog).toContainText(`its folder /etc/planton-states is outside ${own}, where this organization's local states are kept`);
  await expect(dialog).toContainText(`Choose a folder under ${own}, or have the console's operator allow the folder with PLANTON_STATE_LOCAL_ROOTS.`);
  await screenshot(page, "state-backends-local-folder-refused");
  await dialog.getByLabel("path").fill(path.join(own, "states"));
  await dialog.getByRole("button", { name: "Test and create" }).click();
  await expect(dialog).toBeHidden();
  await expect(table.getByRole("row", { name: /e2e-files/ })).toContainText("Local directory");

  // A bucket that does not exist: the write fails, the dialog says so, nothing is saved.
  await page.getByRole("button", { name: "New state backend" }).click();
  await dialog.getByLabel("Name").fill("e2e-missing");
  await dialog.getByLabel("Kind").selectOption({ label: "Amazon S3" });
  await dialog.getByLabel("Connection").selectOption("s3rver");
  await dialog.getByLabel("bucket").fill("no-such-bucket");
  await dialog.getByLabel("endpoint").fill(s3.endpoint);
  await dialog.getByRole("button", { name: "Test and create" }).click();
  const steps = dialog.getByRole("region", { name: "Access test" });
  await expect(steps).toContainText("Access test failed");
  await expect(steps.locator('[data-step="open"]')).toHaveAttribute("data-ok", "true");
  await expect(steps.locator('[data-step="write"]')).toHaveAttribute("data-ok", "false");
  await expect(dialog.getByRole("alert")).toContainText("failed at writing a probe state: the bucket does not exist; create it, or correct the bucket name. Nothing was saved.");
  await dialog.getByRole("alert").scrollIntoViewIfNeeded();
  await screenshot(page, "state-backends-access-failed");

  // The bucket s3rver has: every step passes and the backend is created.
  await dialog.getByLabel("Name").fill("e2e-s3");
  await dialog.getByLabel("bucket").fill("e2e-states");
  await dialog.getByRole("button", { name: "Test and create" }).click();
  await expect(dialog).toBeHidden();
  await expect(table.getByRole("row", { name: /e2e-missing/ })).toHaveCount(0);
  const row = table.getByRole("row", { name: /e2e-s3/ });
  await expect(row).toContainText("Amazon S3");
  await expect(row).toContainText("s3rver");
  await expect(row).toContainText("bucket=e2e-states");

  // The builtin default: new builtin components keep their state there.
  await page.getByLabel("builtin", { exact: true }).selectOption("e2e-s3");
  await expect(row.getByText("builtin", { exact: true })).toBeVisible();
  await expect(page.getByLabel("builtin", { exact: true })).toHaveValue("e2e-s3");

  // A default cannot be deleted: the refusal says which provisioner and the command that changes it.
  await row.getByRole("button", { name: "Delete e2e-s3" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Delete backend" }).click();
  await expect(page.getByRole("dialog").getByRole("alert")).toContainText("it is the organization's default for builtin");
  await expect(page.getByRole("dialog").getByRole("alert")).toContainText("planton infra state-backend set-default <backend> --provisioner builtin");
  await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
  // The toasts gone, so the picture shows the page itself.
  await expect(page.locator("[data-sonner-toast]")).toHaveCount(0);
  await screenshot(page, "state-backends");

  // A viewer: the same page, read-only.
  const viewerContext = await browser.newContext();
  const viewer = await viewerContext.newPage();
  await signIn(viewer, VIEWER.email, VIEWER.password);
  await viewer.goto(`${s.baseURL}/o/${SLUG}/settings/state-backends`);
  const viewerRow = viewer.getByRole("table", { name: "State backends" }).getByRole("row", { name: /e2e-s3/ });
  await expect(viewerRow).toContainText("builtin");
  await expect(viewer.getByText("Creating, editing and deleting backends and changing the defaults needs the admin role")).toBeVisible();
  await expect(viewer.getByRole("button", { name: "New state backend" })).toHaveCount(0);
  await expect(viewer.getByRole("button", { name: /^(Edit|Delete) / })).toHaveCount(0);
  await expect(viewer.getByLabel("builtin", { exact: true })).toHaveCount(0);
  await expect(viewer.locator('[data-provisioner="builtin"]')).toContainText("e2e-s3");
  await expect(viewer.getByTestId("move-off-card")).toContainText("2 states");
  await screenshot(viewer, "state-backends-viewer");
  await viewerContext.close();
});
