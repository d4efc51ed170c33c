// The flow-control toggles: their names, the platform's defaults, and how the console labels and
// explains each. The server, the runner protocol and the console all take them from here.
import { PROTECT_DELETES_EXPLAIN } from "./delete-protection";

export const POLICY_TOGGLES = ["manualStart", "skipRefresh", "previewBeforeApply", "pauseBeforeApply", "protectDeletes"] as const;
export type PolicyToggle = (typeof POLICY_TOGGLES)[number];
export type PolicyToggles = Record<PolicyToggle, boolean>;
/** Where a policy applies, broadest first: the most specific one that exists wins. */
export const POLICY_SELECTORS = ["platform", "organization", "environment", "component"] as const;
export type PolicySelector = (typeof POLICY_SELECTORS)[number];

/** The platform policy: what applies where nothing more specific does. */
export const PLATFORM_DEFAULT: PolicyToggles = {
  manualStart: false,
  skipRefresh: false,
  previewBeforeApply: true,
  pauseBeforeApply: false,
  protectDeletes: false,
};

export const TOGGLE_TEXT: Record<PolicyToggle, { label: string; explain: string }> = {
  manualStart: { label: "Manual start", explain: "A new job waits for someone to approve it before anything runs." },
  skipRefresh: { label: "Skip refresh", explain: "Jobs do not re-read real resources first; faster, but drift goes unnoticed." },
  previewBeforeApply: { label: "Preview before apply", explain: "Update and destroy jobs show the planned changes before making them." },
  pauseBeforeApply: {
    label: "Pause before apply",
    explain: "Update and destroy jobs wait after their preview for an approval of that exact plan; the preview runs even with Preview before apply off, since an approval is bound to a plan's checksum.",
  },
  protectDeletes: { label: "Protect deletes", explain: PROTECT_DELETES_EXPLAIN },
};

/** Just the toggles of a policy-shaped record. */
export const togglesOf = (p: PolicyToggles): PolicyToggles => Object.fromEntries(POLICY_TOGGLES.map((t) => [t, p[t]])) as PolicyToggles;
