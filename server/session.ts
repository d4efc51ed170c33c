import { headers } from "next/headers";
import { getRuntime } from "./runtime";
import { getOrganizationBySlug, membershipOf, organizationsOfUser } from "./services/organizations/lookup";

/** For server-rendered pages: who is signed in, or null. */
export async function pageSession() {
  const rt = await getRuntime();
  const session = await rt.auth.api.getSession({ headers: await headers() });
  return session ? { rt, user: session.user } : null;
}

export async function pageMembership(slug: string) {
  const s = await pageSession();
  if (!s) return { signedIn: false as const };
  const org = await getOrganizationBySlug(s.rt.db, slug);
  const role = org ? await membershipOf(s.rt.db, org.id, s.user.id) : null;
  const orgs = await organizationsOfUser(s.rt.db, s.user.id);
  return { signedIn: true as const, user: s.user, org, role, orgs };
}
