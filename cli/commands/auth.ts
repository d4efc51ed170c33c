// `planton auth login|status|logout`: the server URL and API token the other commands use.
import readline from "node:readline/promises";
import { Command } from "commander";
import { createPlantonClient } from "../../lib/client";
import { configPath, readConfig, removeConfig, resolveLogin, writeConfig } from "../config";
import { c, out, Refusal } from "../output";

async function ask(question: string): Promise<string> {
  if (!process.stdin.isTTY) return "";
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

export function authCommand(): Command {
  const auth = new Command("auth").description("Log in to a Planton console with an API token");

  auth
    .command("login")
    .description("Verify a server URL and API token, and store them in your config (mode 0600)")
    .option("--url <server>", "the console's URL, e.g. https://planton.example.com")
    .option("--token <plt_…>", "an API token (Settings → API Tokens)")
    .addHelpText("after", "\nExample:\n  $ planton auth login --url http://127.0.0.1:3000 --token plt_…\n\nPLANTON_URL and PLANTON_TOKEN, when set, override what is stored. PLANTON_CONFIG_DIR names another config folder.\n")
    .action(async (o: { url?: string; token?: string }) => {
      const stored = readConfig();
      const url = (o.url || process.env.PLANTON_URL || (await ask(`Server URL${stored.url ? ` [${stored.url}]` : ""}: `)) || stored.url || "").replace(/\/+$/, "");
      const token = o.token || process.env.PLANTON_TOKEN || (await ask("API token (plt_…): "));
      if (!url) throw new Refusal("Not logged in: no server URL. Pass --url https://planton.example.com.");
      if (!token) throw new Refusal("Not logged in: no API token. Create one in Settings → API Tokens, then pass --token plt_….");
      if (!/^https?:\/\//.test(url)) throw new Refusal(`Not logged in: ${url} is not an http(s) URL. Pass --url like http://127.0.0.1:3000.`);
      const me = await createPlantonClient({ url, token }).whoami();
      const file = writeConfig({ ...stored, url, token });
      out(`Logged in to ${url} as ${me.user.label}, ${me.role} in ${me.organization.slug}. Stored in ${file}.`);
    });

  auth
    .command("status")
    .description("Show which server and token the CLI uses, and check the token still works")
    .addHelpText("after", "\nExample:\n  $ planton auth status\n")
    .action(async () => {
      const login = resolveLogin();
      if (!login) throw new Refusal(`Not logged in: no server URL and API token in ${configPath()} or PLANTON_URL/PLANTON_TOKEN. Run planton auth login --url <server> --token <plt_…>.`);
      const me = await createPlantonClient(login).whoami();
      out(`Server:       ${login.url}${login.from.url === "env" ? c.dim(" (PLANTON_URL)") : ""}`);
      out(`Token:        ${login.token.slice(0, 8)}…${login.from.token === "env" ? c.dim(" (PLANTON_TOKEN)") : c.dim(` (${configPath()})`)}`);
      out(`Signed in as: ${me.user.label}`);
      out(`Organization: ${me.organization.slug} (${me.organization.name}), role ${me.role}`);
    });

  auth
    .command("logout")
    .description("Forget the stored server URL and token")
    .addHelpText("after", "\nExample:\n  $ planton auth logout\n")
    .action(() => {
      out(removeConfig() ? `Logged out: removed ${configPath()}.` : `Nothing to forget: ${configPath()} does not exist.`);
      if (process.env.PLANTON_TOKEN) out("PLANTON_TOKEN is still set in this shell; unset it too.");
    });
  return auth;
}
