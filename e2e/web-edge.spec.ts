// The web edge in Chromium: every page works under the Content-Security-Policy (the xterm log pane
// included) with no violation reported, sign-in never follows `next` off the console, and a page on
// another origin cannot frame the console.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, expect, test, type BrowserContext, type Page } from "@playwright/test";
import { TRPC_MAX_BATCH_CALLS } from "../lib/trpc/limits";
import { e2eState, expectPreflightPassed, signIn } from "./support";

/** Collects every CSP violation the page reports (the DOM event and Chromium's console line) and every uncaught error. */
async function watchForViolations(context: BrowserContext, page: Page) {
  const problems: string[] = [];
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => console.error(`securitypolicyviolation: ${e.violatedDirective} blocked ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`));
  });
  page.on("console", (m) => {
    if (/securitypolicyviolation|Content Security Policy|Content-Security-Policy/i.test(m.text())) problems.push(`${page.url()}: ${m.text()}`);
  });
  page.on("pageerror", (err) => problems.push(`${page.url()}: uncaught ${err.message}`));
  return problems;
}

test("every page works under the Content-Security-Policy, the xterm log pane included, with no violation", async ({ context, page }) => {
  // A job, its log pane and every settings page (the Modules pages too), on a machine that may be busy.
  test.setTimeout(240_000);
  const s = e2eState();
  const problems = await watchForViolations(context, page);
  let largestBatch = 0;
  page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith("/api/trpc/")) largestBatch = Math.max(largestBatch, u.pathname.slice("/api/trpc/".length).split(",").length);
  });

  // Signing in needs the hydrated form (its inputs stay disabled until the scripts run).
  await signIn(page, s.email, s.password);
  await expect(page.getByRole("link", { name: "docs-site" })).toBeVisible();

  await page.getByRole("link", { name: "docs-site" }).click();
  await expect(page.getByRole("heading", { name: /docs-site/ })).toBeVisible();
  await page.getByRole("tab", { name: /Versions/ }).click();
  await expect(page.getByTestId("version-title")).toHaveText("Version 1");
  await page.getByRole("button", { name: "Run job" }).first().click();
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("radio", { name: /^Preview/ }).check();
  await dialog.getByLabel("Version message").fill("Under the CSP");
  await expectPreflightPassed(dialog);
  await dialog.getByRole("button", { name: /^Run preview/ }).click();
  await expect(page).toHaveURL(/\/o\/acme\/jobs\/job_/);
  await expect(page.getByTestId("job-result")).toHaveText("Succeeded", { timeout: 90_000 });
  await page.locator('li[data-step="init"] > button').click();
  // The log pane is xterm.js, loaded as its own chunk and drawing with its own <style> elements.
  await expect(page.getByTestId("log-text-init")).toContainText("Initialized the builtin engine");
  await expect(page.locator(".xterm-rows").first()).toContainText("Initialized the builtin engine");

  for (const path of ["/o/acme/jobs", "/o/acme/components?show=gone", "/o/acme/components/new", "/o/acme/settings", "/o/acme/settings/environments", "/o/acme/settings/connections", "/o/acme/settings/secrets", "/o/acme/settings/flow-control", "/o/acme/settings/members", "/o/acme/settings/api-tokens", "/o/acme/settings/runners", "/o/acme/settings/state-backends", "/o/acme/settings/state-backends/move", "/o/acme/settings/modules", "/o/acme/settings/modules/static-site", "/o/acme/audit", "/o/acme/no-such-page"]) {
    await page.goto(`${s.baseURL}${path}`);
    await page.waitForLoadState("networkidle");
    await expect(page.locator("h1").first()).toBeVisible();
  }
  expect(problems).toEqual([]);
  console.log(`the largest tRPC batch the pages sent: ${largestBatch} calls (limit ${TRPC_MAX_BATCH_CALLS})`);
  expect(largestBatch).toBeLessThanOrEqual(TRPC_MAX_BATCH_CALLS);
});

test("after sign-in, a next that leaves the console opens the organization's home; a path on the console is followed", async ({ browser }) => {
  const s = e2eState();
  const signInWithNext = async (next: string) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${s.baseURL}/sign-in?next=${encodeURIComponent(next)}`);
    await page.getByLabel("Email").fill(s.email);
    await page.getByLabel("Password").fill(s.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    return { context, page };
  };
  for (const next of ["http://evil.example/o/acme/components", "//evil.example/o/acme", "/\\evil.example", "javascript:alert(document.domain)"]) {
    const { context, page } = await signInWithNext(next);
    await expect(page, next).toHaveURL(`${s.baseURL}/o/acme/components`);
    await context.close();
  }
  const { context, page } = await signInWithNext("/o/acme/jobs?status=running");
  await expect(page).toHaveURL(`${s.baseURL}/o/acme/jobs?status=running`);
  await context.close();
});

test("a page on another origin cannot frame the console: Chromium refuses and shows nothing of it", async ({ page }) => {
  const s = e2eState();
  // The other site: a page that frames the console, and a page of its own it frames as a control.
  const other = http.createServer((req, res) => {
    res.setHeader("content-type", "text/html");
    if (req.url === "/own") return res.end("<p>the other site's own page</p>");
    res.end(`<iframe id="own" src="/own"></iframe><iframe id="console" src="${s.baseURL}/sign-in"></iframe>`);
  });
  await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
  try {
    const blocked = page.waitForEvent("requestfailed", (r) => r.url() === `${s.baseURL}/sign-in`);
    const refused = page.waitForEvent("console", (m) => m.text().includes(`Framing '${s.baseURL}/'`));
    await page.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
    expect((await blocked).failure()?.errorText).toBe("net::ERR_BLOCKED_BY_RESPONSE");
    expect((await refused).text()).toContain(`violates the following Content Security Policy directive: "frame-ancestors 'none'". The request has been blocked.`);
    // The control: the same page frames its own page, so a console that showed would be seen.
    await expect(page.frameLocator("#own").getByText("the other site's own page")).toBeVisible();
    await expect(page.frameLocator("#console").getByText("Sign in to Planton")).toHaveCount(0);
    expect(page.frames().map((f) => f.url())).not.toContain(`${s.baseURL}/sign-in`);
  } finally {
    await new Promise((r) => other.close(r));
  }
});

test("signing in on an address the console was not configured for says why and which setting to set", async () => {
  const s = e2eState();
  const port = new URL(s.baseURL).port;
  // Another name for the same console, as a LAN address would be: the browser resolves it to the console.
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-gpu", "--host-resolver-rules=MAP console.lan 127.0.0.1"],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`http://console.lan:${port}/sign-in`);
    await page.getByLabel("Email").fill(s.email);
    await page.getByLabel("Password").fill(s.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").filter({ hasText: "Nothing was done" })).toHaveText(
      `Nothing was done: the request came from http://console.lan:${port}, which is not the console's address ${s.baseURL}, so it may be another site acting with your sign-in. If you open the console at that address, set PLANTON_URL to it (or add it to PLANTON_TRUSTED_ORIGINS) and restart the console; otherwise open the console at ${s.baseURL} and try again.`,
    );
    await expect(page).toHaveURL(`http://console.lan:${port}/sign-in`);
  } finally {
    await browser.close();
  }
});
