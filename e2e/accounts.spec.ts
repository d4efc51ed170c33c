// Accounts in the browser: an admin invites a person, the link sets a password once (a second use
// and an expired link are refused), the person changes their password; and sign-in over plain HTTP
// at a LAN address works, or says why it cannot.
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { freePort } from "../test/postgres-cluster";
import { expireInvitations } from "./db";
import { e2eState, screenshot, signIn } from "./support";

test.describe.configure({ mode: "serial", timeout: 180_000 });

async function invite(page: Page, email: string, role: string): Promise<string> {
  await page.goto(`${e2eState().baseURL}/o/acme/settings/members`);
  await page.getByRole("button", { name: "Add member" }).click();
  const form = page.getByRole("dialog");
  await form.getByLabel("Email").fill(email);
  await form.getByLabel("Role").selectOption(role);
  await form.getByRole("button", { name: "Add member" }).click();
  const shown = page.getByRole("dialog", { name: `Invitation created for ${email} (${role})` });
  await expect(shown).toBeVisible();
  const link = await shown.getByRole("textbox", { name: "Invitation link" }).inputValue();
  expect(link).toMatch(new RegExp(`^${e2eState().baseURL}/invite/inv_[\\w-]{32}$`));
  return link;
}

/** A browser of its own: the invitee is not the admin. */
async function freshPage(browser: Browser) {
  const context = await browser.newContext();
  return context.newPage();
}

test("an admin invites a new person; the link sets their password once, a second use and an expired link are refused", async ({ page, browser }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  const link = await invite(page, "newbie@acme.example", "engineer");
  await screenshot(page, "invitation-created");
  await page.getByRole("button", { name: "Done" }).click();
  // Nobody joins until the link is used.
  await expect(page.getByRole("table", { name: "Members" }).getByRole("cell", { name: "newbie@acme.example", exact: true })).toHaveCount(0);

  // Two tabs open the link; the first to submit wins, the second is refused.
  const first = await freshPage(browser);
  const second = await freshPage(browser);
  for (const p of [first, second]) {
    await p.goto(link);
    await expect(p.getByRole("heading", { name: "Join Acme" })).toBeVisible();
    await p.getByLabel("Your name").fill("New Bie");
    await p.getByLabel("New password").fill("newbie-chose-this");
    await p.getByLabel("Repeat the password").fill("newbie-chose-this");
  }
  await screenshot(first, "invitation-accept");
  await first.getByRole("button", { name: "Set password" }).click();
  await expect(first.getByRole("status")).toHaveText("Your password is set. Sign in with it.");
  await expect(first.getByLabel("Email")).toHaveValue("newbie@acme.example");
  await first.getByLabel("Password").fill("newbie-chose-this");
  await first.getByRole("button", { name: "Sign in" }).click();
  await expect(first).toHaveURL(/\/o\/acme\/components/);

  await second.getByRole("button", { name: "Set password" }).click();
  await expect(second.getByRole("alert").filter({ hasText: "This invitation was already used on" })).toBeVisible();
  await second.goto(link);
  await expect(second.getByRole("heading", { name: "This invitation cannot be used" })).toBeVisible();
  await expect(second.getByRole("alert").filter({ hasText: "This invitation" })).toHaveText(/^This invitation was already used on \d{4}-\d\d-\d\d \d\d:\d\d UTC, so it cannot be used again\. Sign in with your password, or ask an admin of Acme Corp for a new link \(Settings → Members\)\.$/);

  // The admin sees the new member, who signs in with the password they chose (and only that one).
  await page.reload();
  await expect(page.getByRole("table", { name: "Members" }).getByRole("cell", { name: "newbie@acme.example", exact: true })).toBeVisible();

  // An expired link is refused, naming when it expired.
  const late = await invite(page, "late@acme.example", "viewer");
  await expireInvitations("late@acme.example");
  const third = await freshPage(browser);
  await third.goto(late);
  await expect(third.getByRole("alert").filter({ hasText: "This invitation" })).toHaveText(/^This invitation expired on \d{4}-\d\d-\d\d \d\d:\d\d UTC, so it cannot be used\. Ask an admin of Acme Corp for a new link \(Settings → Members\)\.$/);
  await expect(third.getByLabel("New password")).toHaveCount(0);

  // The new member changes their password on the change-password page.
  await first.getByRole("link", { name: "Change password" }).click();
  await first.getByLabel("Current password").fill("newbie-chose-this");
  await first.getByLabel("New password", { exact: true }).fill("newbie-second-pw");
  await first.getByLabel("Repeat the new password").fill("newbie-second-pw");
  await first.getByRole("button", { name: "Change password" }).click();
  await expect(first.getByRole("status")).toHaveText("Password changed. You stay signed in here; every other session of yours has ended.");

  // The admin resets the member's sign-in: their session ends at once, and a new link is shown once.
  await page.reload();
  await page.getByRole("button", { name: "Reset sign-in of newbie@acme.example" }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Reset sign-in" }).click();
  const reset = page.getByRole("dialog", { name: "Sign-in reset for newbie@acme.example" });
  const resetLink = await reset.getByRole("textbox", { name: "Invitation link" }).inputValue();
  await first.goto(`${s.baseURL}/o/acme/components`);
  await expect(first).toHaveURL(/\/sign-in/);
  await first.goto(resetLink);
  await expect(first.getByRole("heading", { name: "Choose a new password" })).toBeVisible();
  await first.getByLabel("New password").fill("newbie-third-pw");
  await first.getByLabel("Repeat the password").fill("newbie-third-pw");
  await first.getByRole("button", { name: "Set password" }).click();
  await expect(first.getByRole("status")).toHaveText("Your password is set. Sign in with it.");
  await first.getByLabel("Password").fill("newbie-second-pw");
  await first.getByRole("button", { name: "Sign in" }).click();
  await expect(first.getByRole("alert").filter({ hasText: "do not match" })).toBeVisible();
  await first.getByLabel("Password").fill("newbie-third-pw");
  await first.getByRole("button", { name: "Sign in" }).click();
  await expect(first).toHaveURL(/\/o\/acme\/components/);
});

/** The LAN address of this machine: not loopback, so the browser treats http there as insecure. */
function lanAddress(): string {
  for (const list of Object.values(os.networkInterfaces())) for (const i of list ?? []) if (i.family === "IPv4" && !i.internal) return i.address;
  throw new Error("This machine has no non-loopback IPv4 address to test sign-in over a LAN");
}

async function consoleAt(host: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const url = `http://${host}:${port}`;
  // Served on every interface, as `HOST=0.0.0.0 npm start` on a LAN, and opened at this machine's LAN address.
  const child = spawn(process.execPath, ["scripts/serve.mjs", "-p", String(port), "-H", "0.0.0.0"], {
    env: { ...process.env, HOST: "0.0.0.0", PORT: String(port), DATABASE_URL: e2eState().dbUrl, PLANTON_DATA_DIR: e2eState().dataDir, PLANTON_HOSTED_RUNNERS: "0", PLANTON_URL: url, ...env },
    stdio: "ignore",
  });
  await expect.poll(() => fetch(`${url}/api/health`).then((r) => r.ok, () => false), { timeout: 60_000 }).toBe(true);
  return { url, child };
}

test("sign-in over plain HTTP at a LAN address works, and says exactly why when PLANTON_URL demands HTTPS", async ({ page }) => {
  const s = e2eState();
  const host = lanAddress();
  // As `HOST=0.0.0.0 npm start` on a LAN: no PLANTON_URL, served in production mode over plain http.
  const lan = await consoleAt(host, { PLANTON_URL: "" });
  const strict = await consoleAt(host, { PLANTON_URL: "https://planton.example.test" });
  try {
    await page.goto(`${lan.url}/sign-in`);
    await page.getByLabel("Email").fill(s.email);
    await page.getByLabel("Password").fill(s.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(new RegExp(`^${lan.url}/o/acme/components`));
    await expect(page.getByRole("heading", { name: "Infra Components" })).toBeVisible();

    await page.goto(`${strict.url}/sign-in`);
    await expect(page.getByRole("alert").filter({ hasText: "Sign-in cannot work" })).toHaveText(
      `Sign-in cannot work at ${strict.url}: this console's PLANTON_URL is https://planton.example.test, so its session cookie is sent only over HTTPS and this browser will not keep it over plain http. Open https://planton.example.test instead, or, to serve plain HTTP on a trusted network, set PLANTON_URL=${strict.url} and restart the console.`,
    );
    // Signing in anyway does not fall back to the form in silence: the same reason stays on the page.
    await page.getByLabel("Email").fill(s.email);
    await page.getByLabel("Password").fill(s.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("button", { name: "Sign in" })).toBeEnabled();
    await expect(page).toHaveURL(`${strict.url}/sign-in`);
    await expect(page.getByRole("alert").filter({ hasText: "Sign-in cannot work" }).first()).toBeVisible();
  } finally {
    lan.child.kill("SIGTERM");
    strict.child.kill("SIGTERM");
  }
});
