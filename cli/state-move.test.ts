// The move commands' own parts, without a server: how --to is read, what the dry-run table says, and
// their usage. The commands against a real console are in cli.test.ts.
import { describe, expect, it } from "vitest";
import { dryRunLines, parseDestinations } from "./commands/state-move";
import { buildProgram } from "./main";

describe("planton infra state-backend move-off-planton", () => {
  it("reads --to as the one provisioner's backend, or provisioner=backend once each, and refuses the rest with the fix", () => {
    expect(parseDestinations(["prod-s3"])).toEqual({ "*": "prod-s3" });
    expect(parseDestinations(["builtin=prod-s3", "pulumi=pulumi-cloud"])).toEqual({ builtin: "prod-s3", pulumi: "pulumi-cloud" });
    expect(() => parseDestinations(["ansible=x"])).toThrow("Nothing was moved: ansible in --to ansible=x is not a provisioner. Use one of builtin, tofu, terraform, pulumi.");
    expect(() => parseDestinations(["builtin="])).toThrow(/^Nothing was moved: --to builtin= names no backend/);
    expect(() => parseDestinations(["builtin=a", "builtin=b"])).toThrow("Nothing was moved: --to names a backend for builtin twice (a and b). Give one per provisioner.");
  });

  it("prints the dry run as a table with its totals, and says when nothing is left", () => {
    const item = { id: null, componentId: "cmp_1", component: "site", environment: "dev", provisioner: "builtin" as const, from: "planton-managed", to: "prod-s3", fromKey: "planton-managed/o/cmp_1/terraform.tfstate", toKey: "dev/site/terraform.tfstate", size: 2048, serial: 7, checksum: "ab", step: "pending" as const, error: null, canRollBack: false };
    const lines = dryRunLines({ items: [item], totals: { count: 1, size: 2048 } });
    expect(lines[0].split(/\s{2,}/)).toEqual(["COMPONENT", "ENVIRONMENT", "PROVISIONER", "FROM", "TO", "FROM KEY", "TO KEY", "SIZE", "SERIAL"]);
    expect(lines[1].split(/\s{2,}/)).toEqual(["site", "dev", "builtin", "planton-managed", "prod-s3", item.fromKey, item.toKey, "2.0 KiB", "7"]);
    expect(lines.at(-1)).toBe("Dry run: 1 state (2.0 KiB) would move; nothing was changed.");
    expect(dryRunLines({ items: [], totals: { count: 0, size: 0 } })).toEqual(["Nothing would move: no state is left on Planton-managed storage."]);
  });

  it("has a usage line and an example for each move command", () => {
    const program = buildProgram();
    const find = (...path: string[]) => path.reduce((cmd, name) => cmd.commands.find((x) => x.name() === name)!, program);
    for (const [path, usage] of [
      [["infra", "state-backend", "move-off-planton"], "[options]"],
      [["tofu", "state", "migrate-backend"], "[options] <infra-component-id>"],
      [["pulumi", "state", "migrate-backend"], "[options] <infra-component-id>"],
    ] as const) {
      const cmd = find(...path);
      expect(cmd.usage()).toBe(usage);
      let help = "";
      cmd.configureOutput({ writeOut: (s) => (help += s) }).outputHelp();
      expect(help).toMatch(new RegExp(`Examples?:\\n  \\$ planton ${path.join(" ")} `));
    }
  });
});
