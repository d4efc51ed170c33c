// The runner's side of a job's trace: each step is a span under the claim's (the claim hands over its
// traceparent), and the builtin engine's walks are spans under the step through the engine's tracer hook.
import { SpanStatusCode, type Span } from "@opentelemetry/api";
import type { EngineSpan, EngineTracer } from "../engine/index";
import { startSpan } from "../lib/telemetry";

type Adapted = EngineSpan & { span: Span };

const adapt = (span: Span): Adapted => ({
  span,
  addEvent: (name, attributes) => void span.addEvent(name, attributes),
  setAttributes: (attributes) => void span.setAttributes(attributes),
  fail: (message) => void span.setStatus({ code: SpanStatusCode.ERROR, message }),
  end: () => span.end(),
});

/** The engine's tracer for one step: its spans go under `step` (or the parent the engine names); none when the step is not traced. */
export function engineTracer(step: Span | undefined): EngineTracer | undefined {
  if (!step) return undefined;
  return { startSpan: (name, attributes, parent) => adapt(startSpan(name, (parent as Adapted | undefined)?.span ?? step, attributes)!) };
}
