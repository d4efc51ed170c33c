import type { Metadata } from "next";
import Link from "next/link";
import { getRuntime } from "@/server/runtime";
import { pageSession } from "@/server/session";
import { describeInvitation, PASSWORD_MIN } from "@/server/services/accounts/invitations";
import { AuthCard } from "@/components/shell/auth-card";
import { AcceptInvitationButton, InvitationForm } from "@/components/shell/invitation-form";
import { acceptAction, choosePasswordAction } from "./actions";

export const dynamic = "force-dynamic";
// The token is in the path: no page it links to may learn it from the Referer.
export const metadata: Metadata = { title: "Invitation", referrer: "no-referrer" };

export default async function InvitePage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const rt = await getRuntime();
  const s = await pageSession();
  const view = await describeInvitation(rt.db, token, s ? { userId: s.user.id, email: s.user.email } : null);
  switch (view.state) {
    case "choose_password":
      return (
        <AuthCard title={view.reset ? "Choose a new password" : `Join ${view.orgName}`} subtitle={`Choose your name and password for ${view.email}.`}>
          <InvitationForm email={view.email} suggestedName={view.name} minLength={PASSWORD_MIN} action={choosePasswordAction.bind(null, token)} />
        </AuthCard>
      );
    case "accept":
      return (
        <AuthCard title={`Join ${view.orgName}`} subtitle={`You are signed in as ${view.email}.`}>
          <AcceptInvitationButton orgName={view.orgName} action={acceptAction.bind(null, token)} />
        </AuthCard>
      );
    case "sign_in":
      return (
        <AuthCard title={`Join ${view.orgName}`} subtitle={`${view.email} already has a Planton account.`}>
          <p className="text-sm text-slate-700">
            {view.signedInAs ? `You are signed in as ${view.signedInAs}. Sign out, then open this link again and sign in as ${view.email}.` : `Sign in as ${view.email} to join ${view.orgName}.`} If you never chose a
            password for this console, someone else created this account: tell the admin of {view.orgName} who sent you this link.
          </p>
          {!view.signedInAs && (
            <Link
              href={`/sign-in?email=${encodeURIComponent(view.email)}&next=${encodeURIComponent(`/invite/${token}`)}`}
              className="mt-4 inline-flex w-full justify-center rounded-md bg-indigo-600 px-3.5 py-2 text-sm font-medium text-white hover:bg-indigo-500"
            >
              Sign in to join
            </Link>
          )}
        </AuthCard>
      );
    default:
      return (
        <AuthCard title="This invitation cannot be used">
          <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700 ring-1 ring-rose-200">
            {view.message}
          </p>
          <Link href="/sign-in" className="mt-4 block text-center text-sm text-indigo-600 hover:underline">
            Go to sign-in
          </Link>
        </AuthCard>
      );
  }
}
