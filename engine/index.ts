/** Public API of the builtin IaC engine. */
export type * from "./types";
export { refresh } from "./ops/refresh";
export { plan, planChecksum, encodePlan, decodePlan } from "./ops/plan";
export { reviewPlan, sensitiveValues, stateSensitiveValues, type ReviewOptions, type ReviewPlan } from "./ops/review";
export { apply, assertPlanFresh } from "./ops/apply";
export { destroy } from "./ops/destroy";
export { importResource } from "./ops/import";
export { validate } from "./ops/validate";
export { moduleInputs, checkVariableValue, type ModuleInput } from "./config/inputs";
export { LocalStateBackend } from "./state/local-backend";
export { StateLockedError, formatLockError } from "./state/backend";
export { emptyState } from "./state/state";
export { EngineError, ConfigError, CycleError, StalePlanError } from "./errors";
export { renderUiLine } from "./ui";
export { ENGINE_VERSION } from "./version";
export type { Provider, ProviderSchema, ResourceSchema, AttributeSchema } from "./providers/provider";
