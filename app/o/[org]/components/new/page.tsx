import type { Metadata } from "next";
import { CreateComponentForm } from "@/components/infra-components/create-component-form";

export const metadata: Metadata = { title: "New Infra Component" };

export default function Page() {
  return <CreateComponentForm />;
}
