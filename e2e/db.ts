// For setting up what the console has no page for yet; everything a user does goes through the browser.
import { eq } from "drizzle-orm";
import { openDatabase } from "../db/client";
import { invitations, memberships, organizations } from "../db/schema";
import { createAuth, createUserWithPassword } from "../server/auth/auth";
import { newId } from "../lib/ids";
import type { Role } from "../lib/roles";
import { e2eState } from "./support";

export async function addMember(orgSlug: string, role: Role, email: string, password: string) {
  const h = await openDatabase({ url: e2eState().dbUrl, migrate: false });
  try {
    const [org] = await h.db.select().from(organizations).where(eq(organizations.slug, orgSlug));
    const user = await createUserWithPassword(createAuth(h.db), { email, name: `${role[0].toUpperCase()}${role.slice(1)} User`, password });
    await h.db.insert(memberships).values({ id: newId("membership"), orgId: org.id, userId: user.id, role });
  } finally {
    await h.close();
  }
}

/** Moves every invitation for `email` into the past, as if its days had gone by. */
export async function expireInvitations(email: string) {
  const h = await openDatabase({ url: e2eState().dbUrl, migrate: false });
  try {
    await h.db.update(invitations).set({ expiresAt: new Date(Date.now() - 60_000) }).where(eq(invitations.email, email));
  } finally {
    await h.close();
  }
}
