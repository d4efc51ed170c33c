"use server";
import { redirect } from "next/navigation";
import { headers } from "next/headers";
import { ZodError } from "zod";
import { getRuntime } from "@/server/runtime";
import { requestClientAddress } from "@/server/client-address";
import { PlantonError } from "@/server/errors";
import { acceptInvitation } from "@/server/services/accounts/invitations";
import type { AcceptState } from "@/components/shell/invitation-form";


/** Sets the invited person's name and password, then sends them to sign in with it. */
export async function acceptInvitationAction(token: string, _prev: AcceptState, form: FormData): Promise<AcceptState> {
  const rt = await getRuntime();
  let done: { email: string; orgSlug: string };
  try {
    done = await acceptInvitation(rt.db, { token, name: String(form.get("name") ?? ""), password: String(form.get("password") ?? "") }, requestClientAddress(await headers()));
  } catch (err) {
    if (err instanceof ZodError) return { fieldErrors: Object.fromEntries(err.issues.map((i) => [String(i.path[0]), i.message])) };
    if (err instanceof PlantonError) return { message: err.message };
    throw err;
  }
  redirect(`/sign-in?invited=1&email=${encodeURIComponent(done.email)}&next=${encodeURIComponent(`/o/${done.orgSlug}/components`)}`);
}
