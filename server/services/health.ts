// Readiness: the console answers once its database does (migrated and seeded at boot), and says whether it leads the scheduler.
import { sql } from "drizzle-orm";
import { newId } from "@/lib/ids";
import { getRuntime } from "../runtime";
import { isSchedulerLeader } from "./jobs/scheduler";

/** `scheduler`: whether this replica runs the scheduler's work (one leader among the replicas on a database). */
export type Health = { status: "ok"; database: "postgres" | "pglite"; scheduler: "leader" | "follower" } | { status: "unavailable"; error: string };

export async function checkHealth(): Promise<Health> {
  try {
    const rt = await getRuntime();
    await rt.db.execute(sql`select 1`);
    return { status: "ok", database: rt.handle.driver, scheduler: isSchedulerLeader() ? "leader" : "follower" };
  } catch (err) {
    // The cause stays in the server log: a probe's answer carries no connection strings or SQL.
    const errorId = newId("error");
    console.error(`health: the database did not answer (error ${errorId}):`, err);
    return { status: "unavailable", error: `The database did not answer (error ${errorId}); the server log has the cause under that id.` };
  }
}
