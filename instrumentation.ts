// Opens the database, migrates and seeds when the server starts, so the demo sign-in prints at once.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startServerProcesses } = await import("./server/start");
  await startServerProcesses();
}
