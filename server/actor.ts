import type { Role } from "@/lib/roles";

/** Who is acting, in which organization, with which role; services take it first after the db. */
export interface Actor {
  userId: string | null;
  /** Email, API token name or "system": what the audit history shows. */
  label: string;
  orgId: string;
  role: Role;
  clientAddress?: string | null;
}

export const systemActor = (orgId: string): Actor => ({ userId: null, label: "system", orgId, role: "admin" });
