import type { Metadata } from "next";
import { Suspense } from "react";
import { SignInForm } from "@/components/shell/sign-in-form";
import { serverConfig } from "@/server/config";

export const metadata: Metadata = { title: "Sign in" };

export const dynamic = "force-dynamic";

export default function SignInPage() {
  return (
    <main className="flex min-h-full items-center justify-center bg-gradient-to-br from-slate-900 via-slate-800 to-indigo-900 px-4 py-12">
      <div className="w-full max-w-sm">
        <div className="mb-8 text-center">
          <div className="mx-auto mb-3 flex h-11 w-11 items-center justify-center rounded-xl bg-indigo-500 text-lg font-bold text-white shadow-lg">P</div>
          <h1 className="text-2xl font-semibold text-white">Sign in to Planton</h1>
          <p className="mt-1 text-sm text-slate-300">Run and steer your infrastructure jobs.</p>
        </div>
        <div className="rounded-xl bg-white p-6 shadow-xl">
          <Suspense>
            <SignInForm consoleUrl={serverConfig().PLANTON_URL ?? null} />
          </Suspense>
        </div>
        <p className="mt-6 text-center text-xs text-slate-400">First start? The admin sign-in was printed once in the terminal that started the console.</p>
      </div>
    </main>
  );
}
