import type { Metadata } from "next";
import { StateMoveWizard } from "@/components/settings/state-move-wizard";

export const metadata: Metadata = { title: "Move off Planton-managed storage" };

export default function Page() {
  return <StateMoveWizard />;
}
