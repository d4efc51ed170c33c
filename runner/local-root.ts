// Where a job's `local` connection writes. A self-hosted runner uses the connection's root as given;
// a Planton-hosted runner (PLANTON_RUNNER_LOCAL_BASE, set by the console) confines it under
// <base>/<organization>, or under a folder the operator allowed (PLANTON_RUNNER_LOCAL_ROOTS).
import path from "node:path";
import { confined } from "../lib/confined-path";
import type { IacInput } from "../lib/runner-protocol";
import { runnerConfig } from "./config";

export interface LocalRoot {
  root: string;
  /** Under the console's data folder: files are written readable by the runner's user only. */
  ownerOnly: boolean;
}

/** The local provider's root for this job, or null when its connection names none (and no base gives one). */
export function localRootFor(input: IacInput, env: Record<string, string | undefined>): LocalRoot | null {
  const given = input.connection?.config.root;
  const root = typeof given === "string" && given !== "" ? given : undefined;
  const { PLANTON_RUNNER_LOCAL_BASE: base, PLANTON_RUNNER_LOCAL_ROOTS: allowed } = runnerConfig(env);
  if (!base) return root === undefined ? null : { root: path.resolve(root), ownerOnly: false };
  const org = input.orgSlug ?? input.orgId;
  const orgBase = path.join(base, org);
  // A relative root, or none, is placed under the organization's folder.
  const resolved = root === undefined ? orgBase : path.resolve(orgBase, root);
  if (confined(orgBase, resolved)) return { root: resolved, ownerOnly: true };
  if (allowed.some((folder) => confined(folder, resolved))) return { root: resolved, ownerOnly: false };
  const connection = input.connection ? `the ${input.connection.provider} connection ${input.connection.name}` : "the job's connection";
  throw new Error(
    `Nothing ran: ${connection} has the root ${root}, which is outside ${orgBase}, where Planton-hosted runners keep organization ${org}'s local files` +
      (allowed.length ? ` (the operator also allows ${allowed.join(", ")})` : "") +
      `. Set the connection's root to a folder under ${orgBase} (or to a relative path, which is placed there), run the job on a self-hosted runner, ` +
      "or have the console's operator allow the folder with PLANTON_LOCAL_ROOTS, then run the job again.",
  );
}
