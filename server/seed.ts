// First start with an empty database: the demo organization `acme`, ready to use.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { connectionAuthorizations, connections, flowControlPolicies, organizations, users } from "@/db/schema";
import { newId } from "@/lib/ids";
import type { Actor } from "./actor";
import { createUserWithPassword, type Auth } from "./auth/auth";
import { serverConfig } from "./config";
import { createComponentAndDeploy } from "./services/components/lifecycle";
import { createOrganization } from "./services/organizations/create-organization";
import { environmentByName } from "./services/organizations/lookup";
import { localInfraBase } from "./services/runners/hosted";

export const DEMO_ORG = "acme";

export async function seedDemoOrganization(db: Database, auth: Auth, log: (msg: string) => void = console.log): Promise<boolean> {
  const [anyOrg] = await db.select({ id: organizations.id }).from(organizations).limit(1);
  if (anyOrg) return false;
  const config = serverConfig();
  const email = config.PLANTON_ADMIN_EMAIL;
  const given = config.PLANTON_ADMIN_PASSWORD;
  const password = given ?? randomBytes(12).toString("base64url");
  let [admin] = await db.select().from(users).where(eq(users.email, email));
  admin ??= (await createUserWithPassword(auth, { email, name: "Acme Admin", password })) as typeof admin;

  const org = await createOrganization(db, { slug: DEMO_ORG, name: "Acme Corp", environments: ["dev", "staging", "prod"], adminUserId: admin.id, adminLabel: email });
  const actor: Actor = { userId: admin.id, label: email, orgId: org.id, role: "admin" };

  const connId = newId("connection");
  // Where hosted runners may write the organization's local files (see services/runners/hosted.ts).
  const root = path.join(localInfraBase(config.PLANTON_DATA_DIR), DEMO_ORG);
  await db.insert(connections).values({
    id: connId,
    orgId: org.id,
    name: "local-sandbox",
    provider: "local",
    description: "Files on the runner host: where the demo components are created.",
    config: { root },
    mode: "stored",
  });
  await db.insert(connectionAuthorizations).values({ id: newId("connectionAuthorization"), connectionId: connId, scope: "organization" });

  const prod = await environmentByName(db, org.id, "prod");
  await db.insert(flowControlPolicies).values({
    id: newId("flowControlPolicy"),
    selector: "environment",
    orgId: org.id,
    selectorId: prod.id,
    manualStart: false,
    skipRefresh: false,
    previewBeforeApply: true,
    pauseBeforeApply: true,
    protectDeletes: true,
  });

  // Drafts: nothing runs until someone deploys one (its page's Deploy, or a job), and prod's first deploy pauses for approval.
  const demo = { connection: "local-sandbox", deploy: false } as const;
  await createComponentAndDeploy(db, actor, { ...demo, environment: "dev", kind: "StaticSite", name: "docs-site", spec: { site_name: "docs", title: "Acme docs" } });
  await createComponentAndDeploy(db, actor, { ...demo, environment: "prod", kind: "StaticSite", name: "marketing-site", spec: { site_name: "www", title: "Acme" } });
  await createComponentAndDeploy(db, actor, { ...demo, environment: "staging", kind: "DatabaseCredentials", name: "orders-db", spec: { database_name: "orders" } });

  const bar = "─".repeat(64);
  log(
    `\n${bar}\n Planton console: demo organization "${DEMO_ORG}" is ready.\n Sign in as ${email}` +
      (given ? " with the password from PLANTON_ADMIN_PASSWORD." : `\n password: ${password}\n (shown once; change it after signing in)`) +
      `\n${bar}\n`,
  );
  return true;
}
