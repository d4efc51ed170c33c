// `planton connection auth create|list|delete`: who may use a connection — the whole organization, or
// environments by name. A job whose environment may not use its connection fails preflight naming
// `planton connection auth create …` (server/services/jobs/preflight.ts).
import { Command, Option } from "commander";
import type { ConnectionAuthorizationChange, ConnectionAuthorizations } from "../../lib/client";
import { AUTHORIZATION_SCOPES } from "../../lib/api/connection-schemas";
import { client } from "../config";
import { nameList, outputOption } from "../options";
import { c, example, out, table } from "../output";

/** "the organization; staging, prod", or "nobody". */
function authorizedWords(a: ConnectionAuthorizations): string {
  const envs = a.authorizations.filter((x) => x.scope === "environment").map((x) => x.environment);
  const words = [a.authorizations.some((x) => x.scope === "organization") ? "the organization" : "", envs.length ? `${envs.length === 1 ? "environment" : "environments"} ${envs.join(", ")}` : ""].filter(Boolean);
  return words.join("; ") || "nobody";
}

const scopeOption = () => new Option("--scope <scope>", "organization (every environment) or environment (those named with --environments)").choices([...AUTHORIZATION_SCOPES]).makeOptionMandatory();
const environmentsOption = () => new Option("--environments <names>", "with --scope environment: environment names, comma-separated").argParser(nameList);

function printChange(r: ConnectionAuthorizationChange) {
  if (r.added.length) out(`Authorized ${r.added.join(", ")} to use ${r.provider} connection ${c.bold(r.connection)}.`);
  if (r.removed.length) out(`Removed the authorization of ${r.removed.join(", ")} to use ${r.provider} connection ${c.bold(r.connection)}.`);
  if (!r.added.length && !r.removed.length) out(`Nothing was changed: connection ${r.connection} already had that authorization.`);
  out(`Connection ${r.connection} may now be used by ${authorizedWords(r)}.`);
}

export function connectionCommand(): Command {
  const connection = new Command("connection").description("The organization's connections");
  const auth = connection.command("auth").description("Who may use a connection: the whole organization, or chosen environments");
  auth.addHelpText(
    "after",
    example(
      "planton connection auth create --provider aws --connection aws-prod --scope environment --environments staging,prod",
      "planton connection auth list --connection aws-prod",
      "planton connection auth delete --connection aws-prod --scope environment --environments staging",
    ),
  );

  auth
    .command("create")
    .description("Let the organization, or the environments named, use a connection (those already allowed stay)")
    .requiredOption("--provider <provider>", "the connection's provider (aws, gcp, azure, …); another provider's connection is refused")
    .requiredOption("--connection <connection>", "the connection's name")
    .addOption(scopeOption())
    .addOption(environmentsOption())
    .addHelpText(
      "after",
      example("planton connection auth create --provider aws --connection aws-prod --scope environment --environments staging", "planton connection auth create --provider aws --connection aws-prod --scope organization"),
    )
    .action(async (o: { provider: string; connection: string; scope: "organization" | "environment"; environments?: string[] }) => {
      const r = await client().connections.addAuthorization(o.connection, { provider: o.provider, scope: o.scope, environments: o.environments ?? [] });
      printChange(r);
    });

  auth
    .command("list")
    .description("List who may use each connection (or the one named)")
    .option("--connection <connection>", "only this connection")
    .addOption(outputOption())
    .addHelpText("after", example("planton connection auth list", "planton connection auth list --connection aws-prod --output json"))
    .action(async (o: { connection?: string; output: string }) => {
      const list = await client().connections.listAuthorizations(o.connection);
      if (o.output === "json") return out(JSON.stringify(list, null, 2));
      for (const line of table(list.connections.map((a) => [a.connection, a.provider, authorizedWords(a)]), ["CONNECTION", "PROVIDER", "AUTHORIZED FOR"])) out(line);
    });

  auth
    .command("delete")
    .description("Remove exactly the authorizations named: the organization's (--scope organization), or those of the environments named")
    .requiredOption("--connection <connection>", "the connection's name")
    .addOption(scopeOption())
    .addOption(environmentsOption())
    .option("--provider <provider>", "when given, must be the connection's provider")
    .addHelpText(
      "after",
      example("planton connection auth delete --connection aws-prod --scope environment --environments staging", "planton connection auth delete --connection aws-prod --scope organization") +
        "\nAn authorization that does not exist is refused and nothing is removed. Jobs in an environment that may no longer use the connection fail preflight.\n",
    )
    .action(async (o: { provider?: string; connection: string; scope: "organization" | "environment"; environments?: string[] }) => {
      const r = await client().connections.removeAuthorization(o.connection, { provider: o.provider, scope: o.scope, environments: o.environments });
      printChange(r);
    });

  return connection;
}
