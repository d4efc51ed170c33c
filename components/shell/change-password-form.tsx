"use client";
import { useState, type FormEvent } from "react";
import { authClient } from "@/lib/auth-client";
import { Button } from "@/components/ui/button";
import { TextField } from "@/components/ui/field";
import { Card, PageHeader } from "@/components/ui/page";
import { useOrg } from "./org-context";

const MIN = 8;

/** Every user's own password: the current one proves it is them; changing it ends their other sessions. */
export function ChangePasswordForm() {
  const org = useOrg();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setDone(false);
    setAlert(null);
    const fe: Record<string, string> = {};
    if (!current) fe.current = "Enter your current password.";
    if (next.length < MIN) fe.next = `Choose a password of at least ${MIN} characters.`;
    else if (next === current) fe.next = "Choose a password that differs from your current one.";
    if (again !== next) fe.again = "The two passwords differ. Type the same password twice.";
    setErrors(fe);
    if (Object.keys(fe).length) return;
    setBusy(true);
    const res = await authClient.changePassword({ currentPassword: current, newPassword: next, revokeOtherSessions: true });
    setBusy(false);
    if (res.error) {
      if (res.error.code === "INVALID_PASSWORD" || res.error.status === 400) setErrors({ current: "That is not your current password. Nothing was changed; type it again." });
      else setAlert(`Your password was not changed: ${res.error.message ?? "the server refused it"}. Try again.`);
      return;
    }
    setCurrent("");
    setNext("");
    setAgain("");
    setDone(true);
  }

  return (
    <>
      <PageHeader title="Change password" description={`The password you sign in with as ${org.user.email}.`} />
      <Card>
        <form onSubmit={submit} noValidate className="max-w-sm space-y-4">
          <TextField label="Current password" type="password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} error={errors.current} />
          <TextField label="New password" type="password" autoComplete="new-password" value={next} onChange={(e) => setNext(e.target.value)} error={errors.next} hint={`At least ${MIN} characters.`} />
          <TextField label="Repeat the new password" type="password" autoComplete="new-password" value={again} onChange={(e) => setAgain(e.target.value)} error={errors.again} />
          {alert && (
            <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700 ring-1 ring-rose-200">
              {alert}
            </p>
          )}
          {done && (
            <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800 ring-1 ring-emerald-200">
              Password changed. You stay signed in here; every other session of yours has ended.
            </p>
          )}
          <Button type="submit" busy={busy}>
            Change password
          </Button>
        </form>
      </Card>
    </>
  );
}
