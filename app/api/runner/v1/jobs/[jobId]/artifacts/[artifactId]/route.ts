import { jobRoute } from "@/server/runner-api/http";
import { downloadArtifact } from "@/server/services/runners/artifacts";

export const dynamic = "force-dynamic";

export const GET = jobRoute(async ({ rt, jobId, params }) => {
  const a = await downloadArtifact(rt.db, jobId, params.artifactId);
  return new Response(Buffer.from(a.bytes), { headers: { "content-type": "application/octet-stream", digest: a.digest, "cache-control": "no-store" } });
});
