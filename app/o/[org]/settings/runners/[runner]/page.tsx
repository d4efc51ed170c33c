import type { Metadata } from "next";
import { RunnerDetailPage } from "@/components/settings/runner-detail-page";

export async function generateMetadata({ params }: { params: Promise<{ runner: string }> }): Promise<Metadata> {
  return { title: `Runner ${decodeURIComponent((await params).runner)}` };
}

export default async function Page({ params }: { params: Promise<{ runner: string }> }) {
  const { runner } = await params;
  return <RunnerDetailPage name={decodeURIComponent(runner)} />;
}
