import { sql } from "drizzle-orm";
import { getRuntime } from "@/server/runtime";

export const dynamic = "force-dynamic";

/** Ready when the database answers (migrated and seeded at boot). */
export async function GET() {
  try {
    const rt = await getRuntime();
    await rt.db.execute(sql`select 1`);
    return Response.json({ status: "ok", database: rt.handle.driver });
  } catch (err) {
    return Response.json({ status: "unavailable", error: (err as Error).message }, { status: 503 });
  }
}
