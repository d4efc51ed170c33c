// A Pulumi component's State tab: its checkpoint's resources by URN (providers and component resources left out),
// secret outputs masked, the serial shown as the deployment time it is, and two versions compared by URN. The
// checkpoints are written through the Planton-managed store, as a Pulumi job's stack export is (a Pulumi job itself
// needs the pulumi CLI, which is not on this machine: test/integration/engine-pulumi-state.test.ts runs those jobs
// with a stand-in).
import { expect, test } from "@playwright/test";
import { and, eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { organizations, stateBackends, stateObjects } from "../db/schema";
import { systemActor } from "../server/actor";
import { PlantonManagedStore, plantonManagedKey } from "../server/services/state-backends/planton-managed-store";
import { storedStateOf } from "../state-backends/rules";
import { draftComponent } from "../test/components";
import { e2eState, screenshot, signIn } from "./support";

/** Pulumi marks a secret value with this key and value. */
const SECRET = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270" };
const bucket = (i: number) => `urn:pulumi:dev-logs::logs::aws:s3/bucketV2:BucketV2::logs-${i}`;
const checkpoint = (buckets: number, time: string) => ({
  version: 3,
  checkpoint: {
    stack: "dev-logs",
    latest: {
      manifest: { time, magic: "", version: "v3.150.0" },
      resources: [
        { urn: "urn:pulumi:dev-logs::logs::pulumi:pulumi:Stack::logs-dev-logs", custom: false, type: "pulumi:pulumi:Stack", outputs: { bucketName: "logs-0-7f3a", dbPassword: { ...SECRET, ciphertext: "v1:c2VjcmV0" } } },
        { urn: "urn:pulumi:dev-logs::logs::pulumi:providers:aws::default_6_0_0", custom: true, type: "pulumi:providers:aws", id: "provider-id" },
        ...Array.from({ length: buckets }, (_, i) => ({ urn: bucket(i), custom: true, type: "aws:s3/bucketV2:BucketV2", id: `logs-${i}-7f3a`, outputs: { bucket: `logs-${i}-7f3a`, tags: { team: "infra" } } })),
        { urn: "urn:pulumi:dev-logs::logs::random:index/randomPassword:RandomPassword::db", custom: true, type: "random:index/randomPassword:RandomPassword", id: "none", outputs: { length: 24, result: { ...SECRET, ciphertext: "v1:cGFzc3dvcmQ=" } } },
      ],
    },
  },
});

test.beforeAll(async () => {
  const h = await openDatabase({ url: e2eState().dbUrl, migrate: false });
  try {
    const [org] = await h.db.select().from(organizations).where(eq(organizations.slug, "acme"));
    const { id } = await draftComponent(h.db, systemActor(org.id), { environment: "dev", kind: "StaticSite", name: "pulumi-logs", spec: { site_name: "pulumi-logs", title: "logs" }, connection: "local-sandbox" });
    const store = new PlantonManagedStore(h.db, org.id, "pulumi stack export (e2e)");
    const key = plantonManagedKey(org.id, id);
    for (const [buckets, time] of [[1, "2026-12-05T01:00:00.123456789Z"], [3, "2026-12-05T01:10:00.123456789Z"]] as const) {
      await store.write(key, storedStateOf(new TextEncoder().encode(JSON.stringify(checkpoint(buckets, time)))));
    }
    const [planton] = await h.db.select().from(stateBackends).where(and(eq(stateBackends.orgId, org.id), eq(stateBackends.kind, "planton_managed")));
    await h.db.update(stateObjects).set({ backendId: planton.id }).where(eq(stateObjects.componentId, id));
  } finally {
    await h.close();
  }
});

test("a Pulumi component's State tab lists its checkpoint's resources by URN, masks secret outputs and compares versions", async ({ page }) => {
  const s = e2eState();
  await signIn(page, s.email, s.password);
  await page.goto(`${s.baseURL}/o/acme/components`);
  await page.getByRole("link", { name: "pulumi-logs", exact: true }).click();
  await page.getByRole("tab", { name: "State" }).click();
  await expect(page.getByText("A Pulumi checkpoint, one stack per component.")).toBeVisible();
  await expect(page.getByText("(deployed 2026-12-05 01:10:00 UTC)")).toBeVisible();
  const resources = page.getByRole("table", { name: "Resources in state" });
  await expect(resources.locator("tbody tr")).toHaveCount(4);
  await expect(resources).toContainText(bucket(2));
  await expect(resources).not.toContainText("pulumi:providers:aws");
  await expect(resources).not.toContainText("pulumi:pulumi:Stack");
  await expect(page.getByText("sensitive", { exact: true })).toBeVisible();
  await expect(page.locator("body")).not.toContainText("v1:c2VjcmV0");

  const rows = page.getByTestId("state-version");
  await expect(rows).toHaveCount(2);
  for (const serial of [Date.parse("2026-12-05T01:10:00.123Z"), Date.parse("2026-12-05T01:00:00.123Z")]) await page.getByLabel(`Compare serial ${serial}`).check();
  const diff = page.getByTestId("state-diff");
  await expect(diff).toContainText(bucket(1));
  await expect(diff).toContainText(bucket(2));
  await expect(diff).not.toContainText(bucket(0));
  await expect(rows.first()).toContainText("pulumi stack export (e2e)");
  await screenshot(page, "state-pulumi");
});
