// Where a `local` connection may write: as given on a self-hosted runner; under the organization's
// folder of the console's base (or a folder the operator allowed) on a hosted runner.
import { mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { IacInput } from "../lib/runner-protocol";
import { localRootFor } from "./local-root";
import { tempDir } from "./test/helpers";

const input = (root: string | undefined): IacInput => ({
  jobId: "job_1",
  orgId: "org_1",
  orgSlug: "acme",
  component: { id: "cmp_1", name: "site", kind: "StaticSite", environment: "dev" },
  operation: "update",
  steps: ["init"],
  module: { name: "site", version: "1.0.0", provisioner: "builtin", source: "platform", files: {}, sha256: "" },
  variables: {},
  connection: { name: "local-sandbox", provider: "local", mode: "stored", config: root === undefined ? {} : { root } },
  backend: { id: "sbk_1", name: "planton-managed", kind: "planton_managed", config: {} },
  policy: { manualStart: false, skipRefresh: false, previewBeforeApply: true, pauseBeforeApply: false, protectDeletes: false },
  parallelism: 10,
});

describe("a local connection's root", () => {
  it("on a self-hosted runner is the connection's root as given", () => {
    expect(localRootFor(input("/srv/anything"), {})).toEqual({ root: "/srv/anything", ownerOnly: false });
    expect(localRootFor(input(undefined), {})).toBeNull();
  });

  it("on a hosted runner lies under the organization's folder of the base, private to the runner's user", async () => {
    const base = path.join(await tempDir(), "local-infra");
    const env = { PLANTON_RUNNER_LOCAL_BASE: base };
    expect(localRootFor(input(path.join(base, "acme", "sites")), env)).toEqual({ root: path.join(base, "acme", "sites"), ownerOnly: true });
    expect(localRootFor(input("sites"), env)).toEqual({ root: path.join(base, "acme", "sites"), ownerOnly: true });
    expect(localRootFor(input(undefined), env)).toEqual({ root: path.join(base, "acme"), ownerOnly: true });
  });

  it("on a hosted runner an absolute root elsewhere is refused, naming the base and the fixes", async () => {
    const base = path.join(await tempDir(), "local-infra");
    const orgBase = path.join(base, "acme");
    const refusal = (root: string) =>
      `Nothing ran: the local connection local-sandbox has the root ${root}, which is outside ${orgBase}, where Planton-hosted runners keep organization acme's local files. ` +
      `Set the connection's root to a folder under ${orgBase} (or to a relative path, which is placed there), run the job on a self-hosted runner, ` +
      "or have the console's operator allow the folder with PLANTON_LOCAL_ROOTS, then run the job again.";
    const env = { PLANTON_RUNNER_LOCAL_BASE: base };
    expect(() => localRootFor(input("/etc"), env)).toThrow(refusal("/etc"));
    // Another organization's folder, reached by a relative root, is outside too.
    expect(() => localRootFor(input("../globex"), env)).toThrow(refusal("../globex"));
  });

  it("on a hosted runner a link under the base that leads elsewhere does not widen it", async () => {
    const base = path.join(await tempDir(), "local-infra");
    await mkdir(path.join(base, "acme"), { recursive: true });
    await symlink(await tempDir(), path.join(base, "acme", "escape"));
    expect(() => localRootFor(input("escape/site"), { PLANTON_RUNNER_LOCAL_BASE: base })).toThrow(/which is outside .*acme, where Planton-hosted runners keep/);
  });

  it("on a hosted runner a folder the operator allowed is accepted, as given", async () => {
    const base = path.join(await tempDir(), "local-infra");
    const allowed = await tempDir();
    const env = { PLANTON_RUNNER_LOCAL_BASE: base, PLANTON_RUNNER_LOCAL_ROOTS: `/nonexistent/x:${allowed}` };
    expect(localRootFor(input(path.join(allowed, "www")), env)).toEqual({ root: path.join(allowed, "www"), ownerOnly: false });
    expect(() => localRootFor(input("/srv/other"), env)).toThrow(`(the operator also allows /nonexistent/x, ${allowed}).`);
  });
});
