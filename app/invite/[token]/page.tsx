import type { Metadata } from "next";
import Link from "next/link";
import { getRuntime } from "@/server/runtime";
import { describeInvitation, PASSWORD_MIN } from "@/server/services/accounts/invitations";
import { AuthCard } from "@/components/shell/auth-card";
import { InvitationForm } from "@/components/shell/invitation-form";
import { acceptInvitationAction } from "./actions";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Invitation", referrer: "no-referrer" };

export default async function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const rt = await getRuntime();
  const view = await describeInvitation(rt.db, token);
  if (view.state === "set_password") {
    return (
      <AuthCard title={`Join ${view.orgName}`} subtitle={`Choose your name and password for ${view.email}.`}>
        <InvitationForm email={view.email} suggestedName={view.name} minLength={PASSWORD_MIN} action={acceptInvitationAction.bind(null, token)} />
      </AuthCard>
    );
  }
  if (view.state === "join") {
    return (
      <AuthCard title={`Join ${view.orgName}`} subtitle={`${view.email} was added to ${view.orgName}.`}>
        <p className="text-sm text-slate-700">Sign in with your Planton account as you do today; {view.orgName} is in your list of organizations.</p>
        <Link href={`/sign-in?email=${encodeURIComponent(view.email)}&next=${encodeURIComponent(`/o/${view.orgSlug}/components`)}`} className="mt-4 inline-flex w-full justify-center rounded-md bg-indigo-600 px-3.5 py-2 text-sm font-medium text-white hover:bg-indigo-500">
          Sign in
        </Link>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="This invitation cannot be used">
      <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700 ring-1 ring-rose-200">
        {"message" in view ? view.message : ""}
      </p>
      <Link href="/sign-in" className="mt-4 block text-center text-sm text-indigo-600 hover:underline">
        Go to sign-in
      </Link>
    </AuthCard>
  );
}
