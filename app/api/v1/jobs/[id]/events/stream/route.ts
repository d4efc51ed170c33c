import { jobEventStream } from "@/server/public-api/event-stream";

export const dynamic = "force-dynamic";

export { jobEventStream as GET };
