// The Audit page's filters as they live in the URL (so a view can be shared and survives a reload),
// and the same filters as audit.list and the export take them (lib/api/audit-schemas.ts).
import { AUDIT_ACTION_NAMES, AUDIT_RESULTS, AUDIT_TARGET_KIND_NAMES, isAuditActionOrFamily, type AuditResult, type AuditTargetKind } from "@/lib/audit";
import type { AuditFilter } from "@/lib/api/audit-schemas";

/** The URL query keys of the page: the API's filters plus `range`, a preset the page turns into `from`. */
export const AUDIT_URL_KEYS = ["actor", "action", "targetKind", "target", "component", "environment", "result", "range", "from", "to", "q"] as const;
export type AuditUrlKey = (typeof AUDIT_URL_KEYS)[number];
export type AuditUrlFilter = Partial<Record<AuditUrlKey, string>>;

export const AUDIT_RANGES = {
  "24h": { label: "Last 24 hours", ms: 24 * 3600_000 },
  "7d": { label: "Last 7 days", ms: 7 * 24 * 3600_000 },
  "30d": { label: "Last 30 days", ms: 30 * 24 * 3600_000 },
} as const;
export type AuditRange = keyof typeof AUDIT_RANGES;

export function readAuditUrl(params: URLSearchParams): AuditUrlFilter {
  const out: AuditUrlFilter = {};
  for (const k of AUDIT_URL_KEYS) {
    const v = params.get(k)?.trim();
    if (v) out[k] = v;
  }
  return out;
}

const isoOrUndefined = (v: string | undefined) => {
  if (!v) return undefined;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
};

/**
 * The API's filter for a URL filter. A preset range counts back from `anchor` (when the range was
 * chosen or the page opened), so the query stays the same while the page is open and new events still show.
 * Values the API would refuse (an action it does not know, a typo in the URL) are dropped, not sent.
 */
export function auditApiFilter(f: AuditUrlFilter, anchor: number): AuditFilter {
  const preset = f.range && f.range in AUDIT_RANGES ? AUDIT_RANGES[f.range as AuditRange] : null;
  const action = f.action && isAuditActionOrFamily(f.action) ? f.action : undefined;
  return {
    actor: f.actor,
    action,
    targetKind: (AUDIT_TARGET_KIND_NAMES as string[]).includes(f.targetKind ?? "") ? (f.targetKind as AuditTargetKind) : undefined,
    target: f.target,
    component: f.component,
    environment: f.environment,
    result: (AUDIT_RESULTS as readonly string[]).includes(f.result ?? "") ? (f.result as AuditResult) : undefined,
    from: preset ? new Date(anchor - preset.ms).toISOString() : f.range === "custom" ? isoOrUndefined(f.from) : undefined,
    to: !preset && f.range === "custom" ? isoOrUndefined(f.to) : undefined,
    q: f.q,
  };
}

/** The query string of a filter (its unset fields left out), for the export links and "Open in Audit". */
export function auditQueryString(f: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  return q.toString();
}

/** The actions grouped by family ("job": job.create, job.approve, …), in the order lib/audit.ts lists them. */
export function auditActionFamilies(): { family: string; label: string; actions: string[] }[] {
  const families = new Map<string, string[]>();
  for (const a of AUDIT_ACTION_NAMES) {
    const family = a.split(".")[0];
    families.set(family, [...(families.get(family) ?? []), a]);
  }
  return [...families].map(([family, actions]) => ({ family, label: FAMILY_LABEL[family] ?? family[0].toUpperCase() + family.slice(1).replace(/_/g, " "), actions }));
}

const FAMILY_LABEL: Record<string, string> = { api_token: "API tokens", member: "Members", session: "Sign-in", state_backend: "State backends", flow_control: "Flow control", audit: "Audit record" };

/** Whether any filter is set (the component slice counts: it narrows the list too). */
export const auditFiltered = (f: AuditUrlFilter) => AUDIT_URL_KEYS.some((k) => f[k]);
