import { streamingRoute } from "@/server/public-api/http";
import { downloadArtifactForViewer } from "@/server/services/runners/artifacts";

export const dynamic = "force-dynamic";

/**
 * The artifact's bytes with `Digest: sha-256=<base64>`; clients verify it before using them. Encrypted artifacts are
 * refused. The job page links here (its archived log) with the session cookie and `?org=`; scripts send an API token.
 */
export const GET = streamingRoute(async ({ rt, api, params, url }) => {
  await api.jobs.get({ id: params.id, org: url.searchParams.get("org") ?? undefined });
  const a = await downloadArtifactForViewer(rt.db, params.id, params.artifactId);
  return new Response(Buffer.from(a.bytes), {
    headers: {
      "content-type": "application/octet-stream",
      digest: a.digest,
      "content-disposition": `attachment; filename="${a.name.replace(/[^\w.-]/g, "_")}"`,
      "cache-control": "no-store",
    },
  });
}, { sessionCookie: true });
