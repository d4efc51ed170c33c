import type { Metadata } from "next";
import { StateBackendsPage } from "@/components/settings/state-backends-page";

export const metadata: Metadata = { title: "State Backends" };

export default function Page() {
  return <StateBackendsPage />;
}
