import fs from "node:fs";
import path from "node:path";
import { expect, type Locator, type Page } from "@playwright/test";
import { ESSENTIALS } from "../lib/preflight";
import { createTestGates } from "../test/gates";

export interface E2eState {
  baseURL: string;
  email: string;
  password: string;
  dbUrl: string;
  dataDir: string;
  /** Where the console's hosted runners look for test gates (PLANTON_TEST_GATES_DIR). */
  gatesDir: string;
}

export const e2eState = (): E2eState => JSON.parse(fs.readFileSync(path.join(process.cwd(), ".tmp", "e2e-state.json"), "utf8"));

/** The test gates the console's hosted runners honour. */
export const e2eGates = () => createTestGates(e2eState().gatesDir);

export async function signIn(page: Page, email: string, password: string) {
  await page.goto(`${e2eState().baseURL}/sign-in`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/o\/[^/]+\/components/);
}

/** Saves docs/screenshots/<name>.png; `mask` covers what must not be kept in a picture (a token shown once). */
export async function screenshot(page: Page, name: string, mask: Locator[] = []) {
  const dir = path.join(process.cwd(), "docs", "screenshots");
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true, mask, maskColor: "#cbd5e1" });
}

/** The Run job dialog's preflight passed whole: every essential, and the connection's authorization for the environment. */
export async function expectPreflightPassed(dialog: Locator) {
  await expect(dialog.getByRole("list", { name: "Preflight checks" }).locator('[data-passed="true"]')).toHaveCount(ESSENTIALS.length + 1);
}
