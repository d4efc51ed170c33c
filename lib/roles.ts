export const ROLES = ["viewer", "engineer", "admin"] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, engineer: 1, admin: 2 };

export const roleAllows = (have: Role, need: Role) => RANK[have] >= RANK[need];

export const ROLE_DESCRIPTIONS: Record<Role, string> = {
  viewer: "Reads everything; changes nothing.",
  engineer: "Creates components and runs, approves and cancels their jobs.",
  admin: "Also manages settings, members, runners and state backends.",
};
