import { getRuntime } from "./runtime";

/** Everything the server process runs besides answering requests. */
export async function startServerProcesses(): Promise<void> {
  await getRuntime();
}
