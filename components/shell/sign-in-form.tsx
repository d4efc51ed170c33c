"use client";
import { useEffect, useState, type FormEvent } from "react";
import { useRouter, useSearchParams } from "next/navigation";
import { authClient } from "@/lib/auth-client";
import { safeNextPath } from "@/lib/safe-redirect";
import { Button } from "@/components/ui/button";
import { TextField } from "@/components/ui/field";

/** Why this browser cannot keep a session at this address, or null when it can. */
export function cookieProblem(location: { protocol: string; hostname: string; origin: string }, consoleUrl: string | null): string | null {
  // Browsers keep Secure cookies over http only for localhost and 127.0.0.0/8.
  const loopback = location.hostname === "localhost" || location.hostname.endsWith(".localhost") || location.hostname.startsWith("127.") || location.hostname === "[::1]";
  if (!consoleUrl?.startsWith("https://") || location.protocol !== "http:" || loopback) return null;
  return `Sign-in cannot work at ${location.origin}: this console's PLANTON_URL is ${consoleUrl}, so its session cookie is sent only over HTTPS and this browser will not keep it over plain http. Open ${consoleUrl} instead, or, to serve plain HTTP on a trusted network, set PLANTON_URL=${location.origin} and restart the console.`;
}

export function SignInForm({ consoleUrl }: { consoleUrl: string | null }) {
  const router = useRouter();
  const params = useSearchParams();
  const [email, setEmail] = useState(params.get("email") ?? "");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(params.get("error") === "no-organization" ? "Your account belongs to no organization yet. Ask an admin to add you." : null);
  const [busy, setBusy] = useState(false);
  // Inputs stay disabled until hydrated, so nothing typed before then is lost.
  const [ready, setReady] = useState(false);
  const [blocked, setBlocked] = useState<string | null>(null);
  useEffect(() => {
    setReady(true);
    setBlocked(cookieProblem(window.location, consoleUrl));
  }, [consoleUrl]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const res = await authClient.signIn.email({ email, password });
    if (res.error) {
      setBusy(false);
      setError(res.error.status === 401 || res.error.code === "INVALID_EMAIL_OR_PASSWORD" ? "That email and password do not match an account. Check both and try again." : (res.error.message ?? "Sign-in failed. Try again."));
      return;
    }
    // A browser that refused the session cookie would land back here without a word: say so instead.
    const session = await authClient.getSession();
    if (!session.data) {
      setBusy(false);
      setError(
        cookieProblem(window.location, consoleUrl) ??
          "Your password was right, but this browser did not keep the session cookie, so you are still signed out. Allow cookies for this site (or leave private mode) and sign in again.",
      );
      return;
    }
    router.replace(safeNextPath(params.get("next")));
    router.refresh();
  }

  return (
    <form onSubmit={submit} className="space-y-4" noValidate>
      {params.get("invited") === "1" && !error && (
        <p role="status" className="rounded-md bg-emerald-50 px-3 py-2 text-sm text-emerald-800 ring-1 ring-emerald-200">
          Your password is set. Sign in with it.
        </p>
      )}
      {blocked && (
        <p role="alert" className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900 ring-1 ring-amber-200">
          {blocked}
        </p>
      )}
      <TextField label="Email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus={!email} disabled={!ready} />
      <TextField label="Password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} autoFocus={!!email} disabled={!ready} />
      {error && (
        <p role="alert" className="rounded-md bg-rose-50 px-3 py-2 text-sm text-rose-700 ring-1 ring-rose-200">
          {error}
        </p>
      )}
      <Button type="submit" className="w-full" busy={busy}>
        Sign in
      </Button>
    </form>
  );
}
