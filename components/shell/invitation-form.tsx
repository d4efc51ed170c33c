"use client";
import { useActionState, useEffect, useState } from "react";
import { Button } from "@/components/ui/button";
import { TextField } from "@/components/ui/field";

/** What the invitation's server action answers when it refuses. */
export interface AcceptState {
  message?: string;
  fieldErrors?: Record<string, string>;
}

export function InvitationForm({ email, suggestedName, minLength, action }: { email: string; suggestedName: string; minLength: number; action: (prev: AcceptState, form: FormData) => Promise<AcceptState> }) {
  const [state, submit, pending] = useActionState(action, {});
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [mismatch, setMismatch] = useState(false);
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(true), []);
  return (
    <form
      action={submit}
      onSubmit={(e) => {
        if (password !== again) {
          e.preventDefault();
          setMismatch(true);
        }
      }}
      className="space-y-4"
      noValidate
    >
      <TextField label="Email" value={email} readOnly disabled />
      <TextField label="Your name" name="name" defaultValue={suggestedName} autoComplete="name" required error={state.fieldErrors?.name} disabled={!ready} />
      <TextField
        label="New password"
        name="password"
        type="password"
        autoComplete="new-password"
        required
        value={password}
        onChange={(e) => setPassword(e.target.value)}
        hint={`At least ${minLength} characters.`}
        error={state.fieldErrors?.password}
        disabled={!ready}
      />
      <TextField
        label="Repeat the password"
        type="password"
        autoComplete="new-password"
        required
        value={again}
        onChange={(e) => {
          setAgain(e.target.value);
          setMismatch(false);
        }}
        error={mismatch ? "The two passwords differ. Type the same password twice." : undefined}
        disabled={!ready}
      />
      {state.message && (
        <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700 ring-1 ring-rose-200">
          {state.message}
        </p>
      )}
      <Button type="submit" className="w-full" busy={pending}>
        Set password
      </Button>
    </form>
  );
}

export function AcceptInvitationButton({ orgName, action }: { orgName: string; action: (prev: AcceptState) => Promise<AcceptState> }) {
  const [state, submit, pending] = useActionState(action, {});
  return (
    <form action={submit} className="space-y-4">
      {state.message && (
        <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700 ring-1 ring-rose-200">
          {state.message}
        </p>
      )}
      <Button type="submit" className="w-full" busy={pending}>
        Join {orgName}
      </Button>
    </form>
  );
}
