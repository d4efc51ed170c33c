// An Infra Component's life on the direct path (spec/infra-jobs.md "Two Deployment Paths → Direct"):
// creating or changing it queues an `update` job, deleting it runs a `destroy` job, forgetting it lets
// go without destroying. Its statuses and what may be done in each are defined here, once: the server
// refuses with these words and the console and CLI grey out the same actions with the same reason.

export const COMPONENT_STATUSES = ["draft", "active", "deleting", "delete_failed", "deleted", "forgotten"] as const;
export type ComponentStatus = (typeof COMPONENT_STATUSES)[number];

/** How each status reads in lists and on the component's page. */
export const COMPONENT_STATUS_WORDS: Record<ComponentStatus, { label: string; description: string }> = {
  draft: { label: "Draft", description: "Saved without deploying: no job has run for it yet. Deploy it when it is ready." },
  active: { label: "Active", description: "Managed by Planton: changing it queues an update job." },
  deleting: { label: "Deleting", description: "A destroy job is deleting its resources; when it succeeds the component is removed." },
  delete_failed: { label: "Delete failed", description: "The destroy job did not succeed, so the component and whatever it left are still here. Retry the delete." },
  deleted: { label: "Deleted", description: "Its resources were destroyed and it was removed; its jobs, versions, state history and audit events stay readable." },
  forgotten: { label: "Forgotten", description: "Removed from Planton without destroying its resources, which keep running unmanaged; its state is kept for export." },
};

/** Statuses of a component that is no longer managed: left out of lists (the "deleted components" view shows them). */
export const GONE_STATUSES = ["deleted", "forgotten"] as const satisfies readonly ComponentStatus[];
export const isGone = (s: ComponentStatus): boolean => (GONE_STATUSES as readonly ComponentStatus[]).includes(s);

/** Which components a list shows: the managed ones (default), the deleted and forgotten ones, or all. */
export const COMPONENT_LIST_SHOWS = ["current", "gone", "all"] as const;
export type ComponentListShow = (typeof COMPONENT_LIST_SHOWS)[number];

export const COMPONENT_ACTIONS = ["update", "deploy", "delete", "forget"] as const;
export type ComponentAction = (typeof COMPONENT_ACTIONS)[number];

/** The facts the rule needs: the component's status, the job deleting it, and the caller's role. */
export interface ComponentFacts {
  status: ComponentStatus;
  name: string;
  deleteJobId: string | null;
  /** Forgetting needs the admin role; the rest need engineer (checked by the procedures). */
  isAdmin: boolean;
}

/**
 * Why an action may not be done now, as the clause a refusal completes ("Nothing was changed: <why>."),
 * or null when it may. One rule for the service's refusal and the console's disabled button.
 */
export function componentActionRefusal(action: ComponentAction, c: ComponentFacts): string | null {
  if (c.status === "deleted") return `${c.name} was deleted; its history stays readable, but it can no longer be changed. Create a new component to deploy it again`;
  if (c.status === "forgotten") return `${c.name} was forgotten by Planton; its resources are no longer managed here. Create a new component (and import its resources) to manage them again`;
  if (c.status === "deleting") {
    const by = c.deleteJobId ? ` by job ${c.deleteJobId}` : "";
    if (action === "forget") return `${c.name} is being deleted${by}. Cancel that job first (planton infra job cancel ${c.deleteJobId ?? "<job-id>"}), then forget it`;
    return `${c.name} is being deleted${by}. Wait for it to end, or cancel it (planton infra job cancel ${c.deleteJobId ?? "<job-id>"})`;
  }
  if (action === "forget" && !c.isAdmin) return `forgetting a component needs the admin role. Ask an admin of the organization, or delete it instead (its resources are destroyed)`;
  return null;
}

/** Every action of a component with whether it is allowed now and why not (the API's `actions`). */
export function componentActions(c: ComponentFacts): Record<ComponentAction, { allowed: boolean; why: string | null }> {
  return Object.fromEntries(
    COMPONENT_ACTIONS.map((a) => {
      const why = componentActionRefusal(a, c);
      return [a, { allowed: why === null, why }];
    }),
  ) as Record<ComponentAction, { allowed: boolean; why: string | null }>;
}

/** The fields a spec version records and compares (names rather than ids), in the order diffs show them. */
export const VERSIONED_FIELDS = ["description", "spec", "connection", "stateBackend", "customModule"] as const;
export type VersionedField = (typeof VERSIONED_FIELDS)[number];
