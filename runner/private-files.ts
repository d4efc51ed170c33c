// Runner workspaces hold modules, plans, state copies and resolved secret variables: folders 0700 and
// secret files 0600, never reached through a symbolic link someone else put there.
import { constants } from "node:fs";
import { chmod, lstat, mkdir, open } from "node:fs/promises";

/**
 * Creates `dir` (and missing parents) 0700, or makes an existing one 0700. Refuses a folder that is
 * a symbolic link or belongs to another user, since whoever owns it could read what the runner writes.
 */
export async function privateFolder(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await lstat(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) {
    throw new Error(
      `The runner cannot use ${dir} for its workspaces: it is ${st.isDirectory() ? `owned by user ${st.uid}, not by this runner's user ${uid}` : "not a folder (a symbolic link or a file)"}. ` +
        "Remove it, or start the runner with --work-dir set to a folder of its own.",
    );
  }
  if ((st.mode & 0o777) !== 0o700) await chmod(dir, 0o700);
}

/** Writes `content` to `file` readable by the runner's user only (0600), refusing to follow a link at that name. */
export async function writePrivateFile(file: string, content: string | Uint8Array): Promise<void> {
  const fh = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
  try {
    // An existing file keeps its mode on open: set it.
    await fh.chmod(0o600);
    await fh.writeFile(content);
  } finally {
    await fh.close();
  }
}
