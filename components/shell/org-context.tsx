"use client";
import { createContext, useContext, type ReactNode } from "react";
import { roleAllows, type Role } from "@/lib/roles";

export interface OrgInfo {
  slug: string;
  name: string;
  role: Role;
  user: { name: string; email: string };
  orgs: { slug: string; name: string; role: Role }[];
}

const OrgContext = createContext<OrgInfo | null>(null);

export function OrgProvider({ value, children }: { value: OrgInfo; children: ReactNode }) {
  return <OrgContext.Provider value={value}>{children}</OrgContext.Provider>;
}

export function useOrg(): OrgInfo & { can: (need: Role) => boolean } {
  const v = useContext(OrgContext);
  if (!v) throw new Error("useOrg outside an organization page");
  return { ...v, can: (need: Role) => roleAllows(v.role, need) };
}
