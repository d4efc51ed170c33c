// Bring your own module (issue 14), in the browser: an admin registers a module from a git repository
// on local disk (a bare repo this spec makes, under the folder the console allows with
// PLANTON_MODULE_LOCAL_ROOTS) for a kind of the organization's own, and reads its version, inputs and
// README; an engineer creates a component of that kind with the form derived from the module's
// variables (a value the module's validation refuses is shown beside its field), and its job writes the
// file; a viewer reads the Modules pages without register actions. Its own organization.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { users } from "../db/schema";
import type { Actor } from "../server/actor";
import { createOrganization } from "../server/services/organizations/create-organization";
import { localInfraBase } from "../server/services/runners/hosted";
import { createConnection, setConnectionAuthorizations } from "../server/services/settings/connections";
import { addMember } from "./db";
import { e2eState, screenshot, signIn } from "./support";

test.describe.configure({ mode: "serial", timeout: 240_000 });

const ORG = "own-modules";
const ENGINEER = { email: "engineer@own-modules.example", password: "engineer-password-1" };
const VIEWER = { email: "viewer@own-modules.example", password: "viewer-password-1" };
const MODULE = "team-note";
const KIND = "TeamNote";
const VALIDATION = "The note's file name must be at most 12 characters long.";
let repoUrl = "";
let commit = "";
let filesRoot = "";

const MAIN_TF = `# A note written as a file under the connection's folder.
resource "local_file" "note" {
  filename        = "notes/\${var.file_name}.txt"
  content         = "\${var.greeting}, \${var.file_name}!\\n"
  file_permission = "0644"
}

output "note_path" {
  value       = local_file.note.filename
  description = "The note's path, relative to the connection's folder."
}
`;

const VARIABLES_TF = `variable "file_name" {
  type        = string
  description = "The note's file name, without .txt."

  validation {
    condition     = length(var.file_name) <= 12
    error_message = "${VALIDATION}"
  }
}

variable "greeting" {
  type        = string
  default     = "Hello"
  description = "The note's first word."
}
`;

const README = `# Team note

Writes one **note** under the connection's folder: \`notes/<file_name>.txt\`.

## Inputs

- \`file_name\`: the note's name, at most 12 characters
- \`greeting\`: its first word

\`\`\`hcl
file_name = "standup"
\`\`\`
`;

/** A bare git repository with the module at its root, on branch main; returns its file:// URL and the commit. */
function makeModuleRepo(root: string): { url: string; commit: string } {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "planton-e2e-module-work-"));
  const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=E2E", "-c", "user.email=e2e@example.com", "-c", "init.defaultBranch=main", ...args], { cwd, encoding: "utf8" }).trim();
  try {
    fs.writeFileSync(path.join(work, "main.tf"), MAIN_TF);
    fs.writeFileSync(path.join(work, "variables.tf"), VARIABLES_TF);
    fs.writeFileSync(path.join(work, "README.md"), README);
    git(work, "init", "-q");
    git(work, "add", ".");
    git(work, "commit", "-q", "-m", "team-note 1.0.0");
    const bare = path.join(root, `${MODULE}.git`);
    git(root, "clone", "-q", "--bare", work, bare);
    return { url: `file://${bare}`, commit: git(work, "rev-parse", "HEAD") };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

test.beforeAll(async () => {
  const s = e2eState();
  ({ url: repoUrl, commit } = makeModuleRepo(s.moduleRootsDir));
  const h = await openDatabase({ url: s.dbUrl, migrate: false });
  try {
    const [admin] = await h.db.select().from(users).where(eq(users.email, s.email));
    const org = await createOrganization(h.db, { slug: ORG, name: "Own Modules Inc", environments: ["dev"], adminUserId: admin.id, adminLabel: s.email });
    const actor: Actor = { userId: admin.id, label: s.email, orgId: org.id, role: "admin" };
    filesRoot = path.join(localInfraBase(s.dataDir), ORG);
    const local = await createConnection(h.db, actor, { name: "team-files", provider: "local", config: { root: filesRoot } });
    await setConnectionAuthorizations(h.db, actor, { id: local.id, organization: true });
  } finally {
    await h.close();
  }
  await addMember(ORG, "engineer", ENGINEER.email, ENGINEER.password);
  await addMember(ORG, "viewer", VIEWER.email, VIEWER.password);
});

const base = () => `${e2eState().baseURL}/o/${ORG}`;

test("an admin registers a module from a git repository for a kind of the organization's own and reads its version, inputs and README", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await page.goto(`${base()}/settings/environments`);
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Modules" }).click();
  await expect(page.getByRole("heading", { name: "Modules", exact: true })).toBeVisible();
  await expect(page.getByText("No modules of your organization yet")).toBeVisible();
  await expect(page.getByRole("table", { name: "Platform modules" })).toContainText("static-site");

  // Register: a ref the repository does not have is refused with the reason, and nothing typed is lost.
  await page.getByRole("button", { name: "Register module" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Name", { exact: true }).fill(MODULE);
  await dialog.getByLabel("Version", { exact: true }).fill("1.0.0");
  await dialog.getByLabel("Kind", { exact: true }).selectOption({ label: "A new kind of your own…" });
  await dialog.getByLabel("Kind name", { exact: true }).fill(KIND);
  await dialog.getByLabel("Title", { exact: true }).fill("Team note");
  await dialog.getByLabel("Provisioner", { exact: true }).selectOption("builtin");
  await dialog.getByLabel("Repository URL", { exact: true }).fill(repoUrl);
  await dialog.getByLabel("Ref", { exact: true }).fill("no-such-branch");
  await dialog.getByRole("button", { name: "Register version" }).click();
  await expect(dialog.getByRole("alert")).toContainText("no-such-branch");
  await expect(dialog.getByLabel("Name", { exact: true })).toHaveValue(MODULE);
  await expect(dialog.getByLabel("Kind name", { exact: true })).toHaveValue(KIND);
  await expect(dialog.getByLabel("Repository URL", { exact: true })).toHaveValue(repoUrl);

  await screenshot(page, "module-register");
  await dialog.getByLabel("Ref", { exact: true }).fill("main");
  await expect(dialog.getByRole("alert")).toHaveCount(0);
  await dialog.getByRole("button", { name: "Register version" }).click();

  // The new version opens: its source (the commit the ref resolved to), checksum, inputs and README.
  await expect(page).toHaveURL(new RegExp(`/settings/modules/${MODULE}\\?version=1\\.0\\.0`));
  await expect(page.getByTestId("module-version-title")).toContainText(`${MODULE}@1.0.0`);
  await expect(page.getByTestId("module-commit")).toHaveText(commit);
  await expect(page.getByTestId("module-checksum").first()).toHaveAttribute("data-sha", /^[0-9a-f]{64}$/);
  const inputs = page.getByRole("table", { name: "Inputs" });
  await expect(inputs.getByRole("row").filter({ hasText: "file_name" })).toContainText(VALIDATION);
  await expect(inputs.getByRole("row").filter({ hasText: "greeting" })).toContainText('"Hello"');
  await expect(page.getByRole("heading", { name: "Team note" })).toBeVisible();
  await expect(page.locator("pre").filter({ hasText: 'file_name = "standup"' })).toBeVisible();
  await screenshot(page, "module-version");

  await page.getByRole("link", { name: "Modules", exact: true }).first().click();
  const row = page.getByRole("table", { name: "Organization modules" }).getByRole("row").filter({ hasText: MODULE });
  await expect(row).toContainText(KIND);
  await expect(row).toContainText("own kind");
  await expect(row).toContainText("1.0.0");
});

test("an engineer creates a component of the new kind with the form derived from its module; the module's validation refuses a bad value beside its field, and the job writes the file", async ({ page }) => {
  await signIn(page, ENGINEER.email, ENGINEER.password);
  await page.goto(`${base()}/components/new`);
  await page.getByRole("radio", { name: /Team note/ }).click();
  await page.getByLabel("Environment").selectOption("dev");
  await page.getByLabel("Name", { exact: true }).fill("standup-note");
  await expect(page.getByLabel("greeting")).toHaveAttribute("placeholder", "Hello");
  await expect(page.getByLabel("Connection")).toHaveValue("team-files");
  await expect(page.getByTestId("module-picker")).toContainText(`Latest from the registry (currently ${MODULE}@1.0.0)`);

  // The module's validation block, checked by the server, refuses the value beside its field.
  await page.getByLabel("file_name *").fill("a-much-too-long-name");
  await page.getByRole("button", { name: "Create and deploy" }).click();
  await expect(page.locator("#spec-file_name-error")).toContainText(VALIDATION);
  await expect(page).toHaveURL(/\/components\/new/);
  await screenshot(page, "component-create-custom-kind");

  await page.getByLabel("file_name *").fill("standup");
  await page.getByLabel("greeting").fill("Morning");
  await page.getByRole("button", { name: "Create and deploy" }).click();
  await expect(page).toHaveURL(/\/o\/own-modules\/jobs\/job_/);
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  expect(fs.readFileSync(path.join(filesRoot, "notes", "standup.txt"), "utf8")).toBe("Morning, standup!\n");

  // The component names the module its jobs run and the rule that chose it.
  await page.getByRole("link", { name: "standup-note" }).first().click();
  await page.getByRole("tab", { name: "Configuration" }).click();
  const card = page.getByTestId("component-module");
  await expect(card).toContainText(`${MODULE}@1.0.0`);
  await expect(page.getByTestId("module-rule")).toContainText("the latest in your organization's registry");
  await expect(page.getByTestId("last-job-module")).toContainText(`${MODULE}@1.0.0`);
});

test("a viewer reads the Modules pages without register actions, and is told why", async ({ page, browser }) => {
  await signIn(page, VIEWER.email, VIEWER.password);
  await page.goto(`${base()}/settings/modules`);
  const row = page.getByRole("table", { name: "Organization modules" }).getByRole("row").filter({ hasText: MODULE });
  await expect(row).toContainText("1 component");
  await expect(page.getByTestId("register-refusal")).toContainText("needs the admin role");
  await expect(page.getByRole("button", { name: /Register/ })).toHaveCount(0);
  await expect(page.getByRole("checkbox", { name: "Engineers may register modules" })).toHaveCount(0);
  await expect(page.getByTestId("register-policy")).toContainText("Only admins may register modules");
  await row.getByRole("link", { name: MODULE }).click();
  await expect(page.getByTestId("module-version-title")).toContainText(`${MODULE}@1.0.0`);
  await expect(page.getByRole("table", { name: "Module versions" })).toContainText("standup-note");
  await expect(page.getByRole("button", { name: /Register/ })).toHaveCount(0);

  // The admin's view of the same list, for the README's picture.
  const s = e2eState();
  const admin = await browser.newPage();
  try {
    await signIn(admin, s.email, s.password);
    await admin.goto(`${base()}/settings/modules`);
    await expect(admin.getByRole("table", { name: "Organization modules" }).getByRole("row").filter({ hasText: MODULE })).toContainText("1 component");
    await expect(admin.getByRole("checkbox", { name: "Engineers may register modules" })).not.toBeChecked();
    await screenshot(admin, "modules");
  } finally {
    await admin.close();
  }
});
