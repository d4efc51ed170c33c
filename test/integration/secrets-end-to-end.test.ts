// Secrets for real: the built console on a real Postgres, a real runner process and the builtin
// engine. What a viewer can read of a job that used a secret and of a generated password holds
// neither value; an out-of-scope secret stops a job before anything runs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { and, eq } from "drizzle-orm";
import { flowControlPolicies, secrets, stateObjects } from "../../db/schema";
import { newId } from "../../lib/ids";
import { decryptSecret } from "../../server/crypto";
import { draftComponent } from "../components";
import { environmentByName } from "../../server/services/organizations/lookup";
import { createSecret } from "../../server/services/settings/secrets";
import { apiClient } from "../api-client";
import { startJobStack, type Job, type JobStack } from "./harness";

// This process writes secrets and reads them back; the console it starts must hold the same key.
process.env.PLANTON_SECRET_KEY ??= "5e".repeat(32);
const root = path.resolve(import.meta.dirname, "../..");
const SITE_TITLE = "Welcome-to-the-s3cr3t-launch-7f2a";
let stack: JobStack;
let t: JobStack["t"];
let org: JobStack["org"];
let server: JobStack["server"];
let engineer: JobStack["api"];
let viewerToken: string;
let infraRoot: string;
let waitFor: JobStack["waitFor"];
let finished: JobStack["finished"];
const ids: Record<string, string> = {};
const paused = (id: string) => waitFor(id, (j) => j.status === "awaiting_approval" || j.status === "completed");
const run = (component: string, operation: "preview" | "update") => engineer.jobs.create.mutate({ org: org.slug, componentId: ids[component], operation });

/** Updates through the approval a prod job pauses for: the runner then applies the encrypted plan. */
async function approvedUpdate(component: string): Promise<Job> {
  const job = await paused((await run(component, "update")).id);
  expect(job.status, job.reason ?? "").toBe("awaiting_approval");
  const plan = await engineer.jobs.plan.query({ org: org.slug, id: job.id });
  await engineer.jobs.resume.mutate({ org: org.slug, jobId: job.id, expectedChecksum: plan.checksum });
  return finished(job.id);
}

/** Every byte a viewer can read about a job over the REST API, and the status of each artifact download. */
async function viewerReads(jobId: string, componentId: string) {
  const chunks: Buffer[] = [];
  const get = async (p: string) => {
    const res = await fetch(`${server.url}/api/v1${p}`, { headers: { authorization: `Bearer ${viewerToken}` } });
    const bytes = Buffer.from(await res.arrayBuffer());
    chunks.push(bytes);
    return { status: res.status, bytes };
  };
  const job = JSON.parse((await get(`/jobs/${jobId}`)).bytes.toString()) as Job;
  await get(`/jobs/${jobId}/events?limit=5000`);
  await get(`/jobs/${jobId}/plan`);
  await get(`/jobs/${jobId}/iac-input`);
  const listed = JSON.parse((await get(`/jobs/${jobId}/artifacts`)).bytes.toString()) as { artifacts: { id: string; kind: string }[] };
  const downloads: Record<string, number> = {};
  for (const a of listed.artifacts) downloads[a.kind] = (await get(`/jobs/${jobId}/artifacts/${a.id}`)).status;
  // The console's own procedures, as the viewer's browser calls them.
  const viewer = apiClient(server.url, viewerToken);
  chunks.push(Buffer.from(JSON.stringify(await viewer.jobs.get.query({ org: org.slug, id: jobId }))));
  chunks.push(Buffer.from(JSON.stringify(await viewer.jobs.events.query({ org: org.slug, id: jobId, after: 0, limit: 5000 }))));
  chunks.push(Buffer.from(JSON.stringify(await viewer.jobs.plan.query({ org: org.slug, id: jobId }).catch((e) => String(e)))));
  chunks.push(Buffer.from(JSON.stringify(await viewer.jobs.iacInput.query({ org: org.slug, id: jobId }))));
  chunks.push(Buffer.from(JSON.stringify(await viewer.components.state.query({ org: org.slug, id: componentId }))));
  chunks.push(Buffer.from(JSON.stringify(await viewer.secrets.list.query({ org: org.slug }))));
  return { all: Buffer.concat(chunks), job, artifacts: listed.artifacts, downloads };
}

/** The value and every spelling of it a leak could take: as is, base64, base64url, JSON-escaped. */
function expectNowhere(bytes: Buffer, value: string, what: string) {
  const spellings = [value, Buffer.from(value).toString("base64").replace(/=+$/, ""), Buffer.from(value).toString("base64url"), JSON.stringify(value).slice(1, -1)];
  for (const s of new Set(spellings)) expect(bytes.includes(Buffer.from(s)), `${what} appears as ${s}`).toBe(false);
}

function planton(args: string[], token: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(root, "bin/planton.mjs"), ...args], {
      cwd: root,
      env: { ...process.env, PLANTON_URL: server.url, PLANTON_TOKEN: token, PLANTON_CONFIG_DIR: path.join(infraRoot, "cli"), NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

async function generatedPassword(component: string): Promise<string> {
  const [st] = await t.db.select().from(stateObjects).where(eq(stateObjects.componentId, ids[component]));
  return (st.state as { outputs: { password: { value: string } } }).outputs.password.value;
}

beforeAll(async () => {
  stack = await startJobStack();
  ({ t, org, server, api: engineer, infraRoot, waitFor, finished } = stack);
  const prod = await environmentByName(t.db, org.orgId, "prod");
  await t.db.insert(flowControlPolicies).values({ id: newId("flowControlPolicy"), selector: "environment", orgId: org.orgId, selectorId: prod.id, pauseBeforeApply: true });
  await createSecret(t.db, org.actor(), { name: "SITE_TITLE", value: SITE_TITLE, scope: "environment", environments: ["prod"] });
  const mk = async (key: string, name: string, environment: string, kind: string, spec: Record<string, unknown>) => {
    ids[key] = (await draftComponent(t.db, org.actor(), { environment, kind, name, spec, connection: "local-sandbox" })).id;
  };
  await mk("launch", "launch", "prod", "StaticSite", { site_name: "launch", title: "$secret/SITE_TITLE" });
  await mk("creds", "orders-db", "prod", "DatabaseCredentials", { database_name: "orders" });
  await mk("leaky", "leaky", "staging", "StaticSite", { site_name: "leaky", title: "$secret/SITE_TITLE" });
  await mk("typo", "typo", "staging", "StaticSite", { site_name: "typo", title: "$secret/SITE_TITEL" });
  await mk("twinDev", "twin", "dev", "DatabaseCredentials", { database_name: "twin-dev" });
  await mk("twinStaging", "twin", "staging", "DatabaseCredentials", { database_name: "twin-staging" });

  viewerToken = await stack.tokenFor("viewer");
  await stack.startRunner("secrets-runner", 2);
}, 240_000);

afterAll(async () => {
  await stack?.close();
});

describe("secrets, end to end", () => {
  it("a job whose spec used $secret/NAME shows a viewer the secret nowhere: job, events, plan review, IaC input, state, artifacts", async () => {
    const job = await approvedUpdate("launch");
    expect(job.result, job.reason ?? "").toBe("succeeded");
    // The secret did reach the module: the page the site serves carries it.
    const site = fs.readdirSync(path.join(infraRoot, "sites")).find((s) => s.startsWith("launch-"))!;
    expect(fs.readFileSync(path.join(infraRoot, "sites", site, "index.html"), "utf8")).toContain(SITE_TITLE);

    const seen = await viewerReads(job.id, ids.launch);
    expectNowhere(seen.all, SITE_TITLE, "the secret SITE_TITLE");
    expect(seen.artifacts.map((a) => a.kind).sort()).toEqual(["plan", "plan_review"]);
    expect(seen.downloads).toEqual({ plan: 403, plan_review: 200 });
    expect(seen.all.toString()).toContain("Download its review rendition");
    const review = await fetch(`${server.url}/api/v1/jobs/${job.id}/artifacts/${seen.artifacts.find((a) => a.kind === "plan_review")!.id}`, { headers: { authorization: `Bearer ${viewerToken}` } });
    const doc = JSON.parse(await review.text()) as { masked: boolean; variables: Record<string, { value: unknown }> };
    expect(doc.masked).toBe(true);
    expect(doc.variables.title.value).toBe("(sensitive value)");
  });

  it("a DatabaseCredentials update applies its approved, encrypted plan, and a viewer finds the generated password nowhere, nor in the stack diff", async () => {
    const first = await approvedUpdate("creds");
    expect(first.result, first.reason ?? "").toBe("succeeded");
    const password = await generatedPassword("creds");
    expect(password.length).toBe(24);
    // The second update plans against a state that holds the password.
    const second = await approvedUpdate("creds");
    expect(second.result, second.reason ?? "").toBe("succeeded");
    expect(second.outputs).toMatchObject({ password: { sensitive: true, value: "$secret/PROD__ORDERS_DB__PASSWORD" } });

    for (const job of [first, second]) {
      const seen = await viewerReads(job.id, ids.creds);
      expectNowhere(seen.all, password, `the generated password (job ${job.id})`);
      expect(seen.downloads).toMatchObject({ plan: 403, plan_review: 200 });
    }
    const diff = await planton(["infra", "job", "plan", second.id, "--show-stack-diff"], viewerToken);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain("Stack diff (plan sha256");
    expect(diff.stdout).not.toContain(password);

    const [row] = await t.db.select().from(secrets).where(and(eq(secrets.orgId, org.orgId), eq(secrets.name, "PROD__ORDERS_DB__PASSWORD")));
    expect(decryptSecret(row.valueEncrypted)).toBe(password);
    expect(row).toMatchObject({ scope: "environment", componentId: ids.creds });
  });

  it("a job referencing a secret its environment may not use fails preflight naming the secret, the environment and the fix; nothing runs", async () => {
    const created = await run("leaky", "update");
    const job = await engineer.jobs.get.query({ org: org.slug, id: created.id });
    expect(job).toMatchObject({ status: "completed", result: "failed" });
    expect(job.reason).toBe(
      "Nothing ran: environment staging may not use the secret SITE_TITLE. Allow it in Settings → Secrets & Variables (scope: environments staging, or the organization), then run the job again.",
    );
    expect(job.attempts).toEqual([]);
    expect(job.steps.every((s) => s.status === "completed" && s.result === "skipped")).toBe(true);
    expect(job.hasIacInput).toBe(false);

    const typo = await engineer.jobs.get.query({ org: org.slug, id: (await run("typo", "preview")).id });
    expect(typo.reason).toContain("the spec references the secret SITE_TITEL, which does not exist");
    expect(typo.attempts).toEqual([]);
  });

  it("two components of one name in two environments keep distinct generated secrets, both values intact", async () => {
    const [dev, staging] = await Promise.all([run("twinDev", "update"), run("twinStaging", "update")]);
    for (const j of [dev, staging]) expect((await finished(j.id)).result).toBe("succeeded");
    const values = { DEV__TWIN__PASSWORD: await generatedPassword("twinDev"), STAGING__TWIN__PASSWORD: await generatedPassword("twinStaging") };
    expect(values.DEV__TWIN__PASSWORD).not.toBe(values.STAGING__TWIN__PASSWORD);
    const rows = await t.db.select().from(secrets).where(eq(secrets.orgId, org.orgId));
    for (const [name, value] of Object.entries(values)) expect(decryptSecret(rows.find((r) => r.name === name)!.valueEncrypted)).toBe(value);
  });
});
