import type { Metadata } from "next";
import { ApiTokensPage } from "@/components/settings/api-tokens-page";

export const metadata: Metadata = { title: "API tokens" };

export default function Page() {
  return <ApiTokensPage />;
}
