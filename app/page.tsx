import { redirect } from "next/navigation";
import { pageSession } from "@/server/session";
import { organizationsOfUser } from "@/server/services/organizations/lookup";

export const dynamic = "force-dynamic";

export default async function Home() {
  const s = await pageSession();
  if (!s) redirect("/sign-in");
  const orgs = await organizationsOfUser(s.rt.db, s.user.id);
  if (!orgs.length) redirect("/sign-in?error=no-organization");
  redirect(`/o/${orgs[0].slug}/components`);
}
