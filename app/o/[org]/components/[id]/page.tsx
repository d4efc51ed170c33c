import type { Metadata } from "next";
import { ComponentDetail } from "@/components/infra-components/component-detail";

export const metadata: Metadata = { title: "Infra Component" };

export default async function Page({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <ComponentDetail id={id} />;
}
