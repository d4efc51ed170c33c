// Builds an organization the way the product does (its own services), with one member per role.
import type { Database } from "../db/client";
import { connectionAuthorizations, connections, memberships } from "../db/schema";
import { createAuth, createUserWithPassword } from "../server/auth/auth";
import { ensurePlatformCatalog } from "../server/services/catalog";
import { ensurePlatformPolicy } from "../server/services/settings/flow-control";
import { createOrganization } from "../server/services/organizations/create-organization";
import { createCallerFactory } from "../server/trpc/init";
import { appRouter } from "../server/trpc/root";
import type { Caller } from "../server/trpc/context";
import type { Actor } from "../server/actor";
import type { Role } from "../lib/roles";
import { newId } from "../lib/ids";

export interface TestOrg {
  orgId: string;
  slug: string;
  users: Record<Role, Caller>;
  actor: (role?: Role) => Actor;
  call: (role: Role | null) => AppCaller;
  connectionId: string;
}

const createCaller = createCallerFactory(appRouter);
export type AppCaller = ReturnType<typeof createCaller>;

let counter = 0;

export async function seedTestOrg(db: Database, opts: { slug?: string; localRoot?: string } = {}): Promise<TestOrg> {
  await ensurePlatformCatalog(db);
  await ensurePlatformPolicy(db);
  const auth = createAuth(db);
  const n = ++counter;
  const slug = opts.slug ?? `org${n}-${Math.random().toString(36).slice(2, 7)}`;
  const mk = async (role: Role): Promise<Caller> => {
    const email = `${role}-${slug}@example.test`;
    const u = await createUserWithPassword(auth, { email, name: `${role} ${slug}`, password: "correct-horse-battery" });
    return { userId: u.id, email, name: u.name };
  };
  const admin = await mk("admin");
  const org = await createOrganization(db, { slug, name: `Org ${slug}`, environments: ["dev", "staging", "prod"], adminUserId: admin.userId, adminLabel: admin.email });
  const engineer = await mk("engineer");
  const viewer = await mk("viewer");
  await db.insert(memberships).values([
    { id: newId("membership"), orgId: org.id, userId: engineer.userId, role: "engineer" },
    { id: newId("membership"), orgId: org.id, userId: viewer.userId, role: "viewer" },
  ]);
  const connectionId = newId("connection");
  await db.insert(connections).values({ id: connectionId, orgId: org.id, name: "local-sandbox", provider: "local", config: { root: opts.localRoot ?? `/tmp/planton-test-${slug}` } });
  await db.insert(connectionAuthorizations).values({ id: newId("connectionAuthorization"), connectionId, scope: "organization" });
  const users = { admin, engineer, viewer };
  return {
    orgId: org.id,
    slug,
    users,
    connectionId,
    actor: (role: Role = "admin") => ({ userId: users[role].userId, label: users[role].email, orgId: org.id, role }),
    call: (role) => createCaller({ db, caller: role ? users[role] : null, clientAddress: "127.0.0.1" }),
  };
}
