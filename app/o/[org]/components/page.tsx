import type { Metadata } from "next";
import { ComponentsList } from "@/components/infra-components/components-list";

export const metadata: Metadata = { title: "Infra Components" };

export default function Page() {
  return <ComponentsList />;
}
