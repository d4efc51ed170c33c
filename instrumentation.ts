// Opens the database, migrates and seeds when the server starts, so the demo sign-in prints at once.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { serverConfig } = await import("./server/config");
  try {
    serverConfig();
  } catch (err) {
    // A bad setting stops the server here, with the variable named, rather than at its first use.
    console.error((err as Error).message);
    process.exit(1);
  }
  const { startServerProcesses } = await import("./server/start");
  await startServerProcesses();
}
