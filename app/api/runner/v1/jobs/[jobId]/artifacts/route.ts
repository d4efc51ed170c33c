import { json, jobRoute } from "@/server/runner-api/http";
import { uploadArtifact } from "@/server/services/runners/artifacts";

export const dynamic = "force-dynamic";

/** Raw bytes with `Digest: sha-256=<base64>`; ?kind=plan|log|state|iac_input&name=… */
export const POST = jobRoute(async ({ rt, access, bytes: read }, req) => {
  const url = new URL(req.url);
  const bytes = await read();
  return json(await uploadArtifact(rt.db, access, { kind: url.searchParams.get("kind"), name: url.searchParams.get("name"), digest: req.headers.get("digest"), bytes }));
});
