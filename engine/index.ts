/** Public API of the builtin IaC engine. */
export type * from "./types";
import { refresh as refreshOp } from "./ops/refresh";
import { plan as planOp } from "./ops/plan";
import { apply as applyOp } from "./ops/apply";
import { destroy as destroyOp } from "./ops/destroy";
import { importResource as importOp } from "./ops/import";
import { traced } from "./trace";

// Each walk is one span when the caller hands in a tracer (trace.ts).
export const refresh = traced("refresh", refreshOp);
export const plan = traced("plan", planOp);
export const apply = traced("apply", applyOp);
export const destroy = traced("destroy", destroyOp);
export const importResource = traced("import", importOp);
export { planChecksum, encodePlan, decodePlan } from "./ops/plan";
export { reviewPlan, sensitiveValues, stateSensitiveValues, type ReviewOptions, type ReviewPlan } from "./ops/review";
export { assertPlanFresh } from "./ops/apply";
export { validate } from "./ops/validate";
export { moduleInputs, checkVariableValue, type ModuleInput } from "./config/inputs";
export { LocalStateBackend } from "./state/local-backend";
export { StateLockedError, formatLockError } from "./state/backend";
export { emptyState } from "./state/state";
export { EngineError, ConfigError, CycleError, StalePlanError } from "./errors";
export { renderUiLine } from "./ui";
export { ENGINE_VERSION } from "./version";
export type { EngineTracer, EngineSpan, SpanAttributes } from "./trace";
export type { Provider, ProviderSchema, ResourceSchema, AttributeSchema } from "./providers/provider";
