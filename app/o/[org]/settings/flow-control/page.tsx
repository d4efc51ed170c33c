import type { Metadata } from "next";
import { FlowControlPage } from "@/components/settings/flow-control-page";

export const metadata: Metadata = { title: "Flow Control" };

export default function Page() {
  return <FlowControlPage />;
}
