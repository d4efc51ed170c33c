import type { Metadata } from "next";
import type { ReactNode } from "react";
import { Toaster } from "sonner";
import { TRPCReactProvider } from "@/lib/trpc/client";
import "./globals.css";

// Every page is rendered per request, so each carries the script nonce of its own Content-Security-Policy (proxy.ts).
export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: { default: "Planton console", template: "%s · Planton console" },
  description: "Run infrastructure-as-code jobs and steer them in the browser.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <TRPCReactProvider>{children}</TRPCReactProvider>
        <Toaster position="bottom-right" richColors closeButton />
      </body>
    </html>
  );
}
