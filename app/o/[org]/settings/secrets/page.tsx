import type { Metadata } from "next";
import { SecretsPage } from "@/components/settings/secrets-page";

export const metadata: Metadata = { title: "Secrets and Variables" };

export default function Page() {
  return <SecretsPage />;
}
