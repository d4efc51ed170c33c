import type { ReactNode } from "react";
import { notFound, redirect } from "next/navigation";
import { pageMembership } from "@/server/session";
import { OrgProvider } from "@/components/shell/org-context";
import { Sidebar } from "@/components/shell/sidebar";

export const dynamic = "force-dynamic";

export default async function OrgLayout({ children, params }: { children: ReactNode; params: Promise<{ org: string }> }) {
  const { org: slug } = await params;
  const m = await pageMembership(slug);
  if (!m.signedIn) redirect(`/sign-in?next=/o/${slug}/components`);
  if (!m.org || !m.role) notFound();
  const value = {
    slug: m.org.slug,
    name: m.org.name,
    role: m.role,
    user: { name: m.user.name, email: m.user.email },
    orgs: m.orgs.map((o) => ({ slug: o.slug, name: o.name, role: o.role })),
  };
  return (
    <OrgProvider value={value}>
      <div className="flex h-full">
        <Sidebar />
        <main className="relative min-w-0 flex-1 overflow-y-auto">
          <div className="mx-auto max-w-6xl px-8 py-8">{children}</div>
        </main>
      </div>
    </OrgProvider>
  );
}
