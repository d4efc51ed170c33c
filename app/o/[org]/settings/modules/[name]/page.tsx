import type { Metadata } from "next";
import { ModuleDetailPage } from "@/components/settings/module-detail-page";

export async function generateMetadata({ params }: { params: Promise<{ name: string }> }): Promise<Metadata> {
  return { title: `Module ${decodeURIComponent((await params).name)}` };
}

export default async function Page({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  return <ModuleDetailPage name={decodeURIComponent(name)} />;
}
