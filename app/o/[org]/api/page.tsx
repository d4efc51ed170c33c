import type { Metadata } from "next";
import { ApiReference, type OpenApiDoc } from "@/components/api-reference/api-reference";
import { openApiDocument } from "@/server/public-api/openapi";

export const metadata: Metadata = { title: "API reference" };

export default function Page() {
  return <ApiReference doc={openApiDocument() as OpenApiDoc} />;
}
