// The job's connection reaches its engine as its provider's variables: the stored credentials of the
// connection the job deploys through, and nothing else; a runner-mode connection hands over none.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { claim, ownStateBackend, testRunner } from "../../../test/job-helpers";
import { seedTestOrg } from "../../../test/fixtures";
import { connectionAuthorizations, infraComponents } from "@/db/schema";
import { newId } from "@/lib/ids";
import { draftComponent } from "../../../test/components";
import { createConnection } from "../settings/connections";
import { createJob } from "../jobs/create-job";
import { readJobConnection } from "./connection";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.close());

async function awsJob(mode: "stored" | "runner") {
  const org = await seedTestOrg(t.db);
  // A runner-mode connection names a self-hosted runner of the organization's.
  const runner = await testRunner(t.db, org, "own", mode === "stored");
  // On the organization's own runner, its state must be in a backend of its own.
  if (mode === "runner") await ownStateBackend(t.db, org, "tofu");
  const conn = await createConnection(t.db, org.actor(), {
    name: `aws-${mode}`,
    provider: "aws",
    config: { region: "eu-west-1" },
    mode,
    runnerId: mode === "runner" ? runner.id : null,
    ...(mode === "stored" ? { credentials: { access_key_id: "AKIAEXAMPLE", secret_access_key: "s3cr3t-value-xyz" } } : {}),
  });
  await t.db.insert(connectionAuthorizations).values({ id: newId("connectionAuthorization"), connectionId: conn.id, scope: "organization" });
  const c = await draftComponent(t.db, org.actor(), { environment: "dev", kind: "AwsS3Bucket", name: "bucket", spec: { bucket_name: "my-bucket" }, connection: conn.name });
  const job = await createJob(t.db, org.actor(), { componentId: c.id, operation: "preview" });
  expect(job.status).toBe("queued");
  return { org, conn, component: c, claimed: (await claim(t.db, runner))! };
}

describe("the job's connection, for its engine", () => {
  it("maps a stored aws connection to AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", async () => {
    const { claimed } = await awsJob("stored");
    // The claim itself carries no credential: the runner asks for them with the job credential.
    expect(JSON.stringify(claimed.claim)).not.toContain("s3cr3t-value-xyz");
    expect(await readJobConnection(t.db, claimed.access)).toEqual({
      provider: "aws",
      mode: "stored",
      env: { AWS_REGION: "eu-west-1", AWS_ACCESS_KEY_ID: "AKIAEXAMPLE", AWS_SECRET_ACCESS_KEY: "s3cr3t-value-xyz" },
    });
  });

  it("hands over nothing for a runner-mode connection: the runner has its own", async () => {
    const { claimed } = await awsJob("runner");
    expect(await readJobConnection(t.db, claimed.access)).toEqual({ provider: "aws", mode: "runner", env: {} });
  });

  it("refuses when the connection the job was created with is gone, naming it", async () => {
    const { claimed, component, conn } = await awsJob("stored");
    await t.db.update(infraComponents).set({ connectionId: null }).where(eq(infraComponents.id, component.id));
    const { connections } = await import("@/db/schema");
    await t.db.delete(connectionAuthorizations).where(eq(connectionAuthorizations.connectionId, conn.id));
    await t.db.delete(connections).where(eq(connections.id, conn.id));
    await expect(readJobConnection(t.db, claimed.access)).rejects.toThrow(/connection aws-stored, which job .* was created with, was deleted/);
  });
});
