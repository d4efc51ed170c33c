// Where the CLI keeps the server URL and API token: ~/.config/planton/config.json (mode 0600);
// PLANTON_CONFIG_DIR names another folder. PLANTON_URL / PLANTON_TOKEN override what is stored.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPlantonClient, type PlantonClient } from "../lib/client";
import { Refusal } from "./output";

export interface StoredConfig {
  url?: string;
  token?: string;
}

export function configDir(): string {
  if (process.env.PLANTON_CONFIG_DIR) return path.resolve(process.env.PLANTON_CONFIG_DIR);
  const base = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config");
  return path.join(base, "planton");
}

export const configPath = () => path.join(configDir(), "config.json");

export function readConfig(): StoredConfig {
  try {
    return JSON.parse(fs.readFileSync(configPath(), "utf8")) as StoredConfig;
  } catch {
    return {};
  }
}

export function writeConfig(config: StoredConfig): string {
  const dir = configDir();
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = configPath();
  fs.writeFileSync(file, JSON.stringify(config, null, 2) + "\n", { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}

export function removeConfig(): boolean {
  try {
    fs.rmSync(configPath());
    return true;
  } catch {
    return false;
  }
}

export interface ResolvedLogin {
  url: string;
  token: string;
  /** Where each came from, for `auth status`. */
  from: { url: "env" | "config"; token: "env" | "config" };
}

export function resolveLogin(): ResolvedLogin | null {
  const stored = readConfig();
  const url = process.env.PLANTON_URL || stored.url;
  const token = process.env.PLANTON_TOKEN || stored.token;
  if (!url || !token) return null;
  return { url, token, from: { url: process.env.PLANTON_URL ? "env" : "config", token: process.env.PLANTON_TOKEN ? "env" : "config" } };
}

/** The client for the logged-in server, or a refusal saying how to log in. */
export function client(): PlantonClient {
  const login = resolveLogin();
  if (!login) {
    throw new Refusal("Not logged in: nothing was sent. Run planton auth login --url <server> --token <plt_…>, or set PLANTON_URL and PLANTON_TOKEN.");
  }
  return createPlantonClient({ url: login.url, token: login.token });
}
