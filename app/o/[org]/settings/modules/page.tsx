import type { Metadata } from "next";
import { ModulesPage } from "@/components/settings/modules-page";

export const metadata: Metadata = { title: "Modules" };

export default function Page() {
  return <ModulesPage />;
}
