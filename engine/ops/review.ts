// The review rendition of a saved plan: the same document with every sensitive value replaced, as
// OpenTofu shows a plan to people. The executable plan keeps the values; this one is for reading.
import { SENSITIVE_VALUE } from "../../lib/secrets";
import type { ResourceChange, SavedPlan, SensitivePath, StateV4 } from "../types";
import type { Value } from "../values";

export interface ReviewOptions {
  /** Variables whose values came from the secret store (`$secret/…` in the spec). */
  secretVariables?: string[];
}

/** A plan for reading: `masked` marks it, and decodePlan refuses to execute it. */
export type ReviewPlan = SavedPlan & { masked: true };

/** Masks a value where its sensitivity marks (`true`, or an object/array of marks) say so. */
function maskBy(value: Value, marks: Value, found: string[]): Value {
  if (marks === true) {
    if (value === null) return null;
    collect(value, found);
    return SENSITIVE_VALUE;
  }
  if (Array.isArray(value) && Array.isArray(marks)) return value.map((v, i) => maskBy(v, marks[i] ?? false, found));
  if (value && marks && typeof value === "object" && typeof marks === "object" && !Array.isArray(value) && !Array.isArray(marks)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskBy(v, marks[k] ?? false, found)]));
  }
  return value;
}

function collect(value: Value, found: string[]): void {
  if (typeof value === "string") found.push(value);
  else if (Array.isArray(value)) value.forEach((v) => collect(v, found));
  else if (value && typeof value === "object") Object.values(value).forEach((v) => collect(v, found));
}

function maskChange(c: ResourceChange, found: string[]): ResourceChange {
  return {
    ...c,
    change: { ...c.change, before: maskBy(c.change.before, c.change.before_sensitive, found), after: maskBy(c.change.after, c.change.after_sensitive, found) },
  };
}

const marksOf = (paths: SensitivePath[]): Value => {
  const marks: Record<string, Value> = {};
  for (const p of paths) if (p[0]?.type === "get_attr") marks[p[0].value] = true;
  return marks;
};

function maskState(state: StateV4, found: string[]): StateV4 {
  return {
    ...state,
    outputs: Object.fromEntries(Object.entries(state.outputs).map(([n, o]) => [n, o.sensitive ? { ...o, value: maskBy(o.value, true, found) } : o])),
    resources: state.resources.map((r) => ({
      ...r,
      instances: r.instances.map((i) => ({ ...i, attributes: maskBy(i.attributes, marksOf(i.sensitive_attributes), found) as typeof i.attributes })),
    })),
  };
}

/** Replaces, anywhere in a value, every occurrence of a known sensitive text (one that a non-sensitive attribute repeats). */
function scrub(value: Value, secrets: string[]): Value {
  if (typeof value === "string") {
    let out = value;
    for (const s of secrets) if (s.length >= 4 ? out.includes(s) : out === s) out = s.length >= 4 ? out.split(s).join(SENSITIVE_VALUE) : SENSITIVE_VALUE;
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => scrub(v, secrets));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v, secrets)]));
  return value;
}

function masked(plan: SavedPlan, opts: ReviewOptions): { review: ReviewPlan; found: string[] } {
  const found: string[] = [];
  const secretVars = new Set(opts.secretVariables ?? []);
  const review: ReviewPlan = {
    ...plan,
    masked: true,
    variables: Object.fromEntries(
      Object.entries(plan.variables).map(([k, v]) => [k, v.sensitive || secretVars.has(k) ? { ...v, value: maskBy(v.value, true, found) } : v]),
    ),
    resource_drift: plan.resource_drift.map((c) => maskChange(c, found)),
    resource_changes: plan.resource_changes.map((c) => maskChange(c, found)),
    output_changes: Object.fromEntries(
      Object.entries(plan.output_changes).map(([n, o]) => [n, o.sensitive ? { ...o, before: maskBy(o.before, true, found), after: maskBy(o.after, true, found) } : o]),
    ),
    prior_state: maskState(plan.prior_state, found),
  };
  return { review, found };
}

/** Every sensitive value a plan holds (attributes marked sensitive, sensitive outputs and variables, secret-backed variables). */
export function sensitiveValues(plan: SavedPlan, opts: ReviewOptions = {}): string[] {
  return [...new Set(masked(plan, opts).found)].filter((s) => s !== "");
}

/** Every sensitive value a state holds (attributes it marks sensitive, sensitive outputs). */
export function stateSensitiveValues(state: StateV4 | null): string[] {
  const found: string[] = [];
  if (state) maskState(state, found);
  return [...new Set(found)].filter((s) => s !== "");
}

/** The plan as people may see it: sensitive values masked, and any text they hold scrubbed wherever else it appears. */
export function reviewPlan(plan: SavedPlan, opts: ReviewOptions = {}): ReviewPlan {
  const { review, found } = masked(plan, opts);
  const secrets = [...new Set(found)].filter((s) => s !== "" && s !== SENSITIVE_VALUE).sort((a, b) => b.length - a.length);
  return scrub(review as unknown as Value, secrets) as unknown as ReviewPlan;
}
