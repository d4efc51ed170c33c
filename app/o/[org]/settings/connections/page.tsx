import type { Metadata } from "next";
import { ConnectionsPage } from "@/components/settings/connections-page";

export const metadata: Metadata = { title: "Connections" };

export default function Page() {
  return <ConnectionsPage />;
}
