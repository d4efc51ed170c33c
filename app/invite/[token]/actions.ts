"use server";
import { redirect } from "next/navigation";
import { headers } from "next/headers";
import { ZodError } from "zod";
import { getRuntime } from "@/server/runtime";
import { requestClientAddress } from "@/server/client-address";
import { PlantonError } from "@/server/errors";
import { pageSession } from "@/server/session";
import { acceptInvitation, choosePasswordWithInvitation } from "@/server/services/accounts/invitations";
import type { AcceptState } from "@/components/shell/invitation-form";

/** A new account's (or a reset's) name and password; then the person signs in with it. */
export async function choosePasswordAction(token: string, _prev: AcceptState, form: FormData): Promise<AcceptState> {
  const rt = await getRuntime();
  let done: { email: string; orgSlug: string };
  try {
    done = await choosePasswordWithInvitation(rt.db, { token, name: String(form.get("name") ?? ""), password: String(form.get("password") ?? "") }, requestClientAddress(await headers()));
  } catch (err) {
    if (err instanceof ZodError) return { fieldErrors: Object.fromEntries(err.issues.map((i) => [String(i.path[0]), i.message])) };
    if (err instanceof PlantonError) return { message: err.message };
    throw err;
  }
  redirect(`/sign-in?invited=1&email=${encodeURIComponent(done.email)}&next=${encodeURIComponent(`/o/${done.orgSlug}/components`)}`);
}

/** Someone signed in as the invited account joins the organization. */
export async function acceptAction(token: string, _prev: AcceptState): Promise<AcceptState> {
  const s = await pageSession();
  if (!s) return { message: "You are not signed in, so nothing was changed. Sign in, then open this link again." };
  let done: { orgSlug: string };
  try {
    done = await acceptInvitation(s.rt.db, { token, userId: s.user.id }, requestClientAddress(await headers()));
  } catch (err) {
    if (err instanceof PlantonError) return { message: err.message };
    throw err;
  }
  redirect(`/o/${done.orgSlug}/components`);
}
