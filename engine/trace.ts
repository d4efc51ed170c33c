// The engine's tracing hook: a caller that traces (the runner, with OpenTelemetry) hands in an
// EngineTracer, and each public operation becomes one walk span with a child span per resource applied
// or refreshed and an event per planned change. The spans are read off the UI lines the operation emits
// anyway, so the operations themselves carry no tracing code, and without a tracer nothing is added.
import type { ApplyOptions, EngineOptions, UiMessage } from "./types";

export type SpanAttributes = Record<string, string | number | boolean>;

/** What the engine needs of a tracer; the caller adapts its own (the engine depends on no tracing library). */
export interface EngineTracer {
  /** A span under `parent`, or under the caller's current span (the runner's step) when there is none. */
  startSpan(name: string, attributes?: SpanAttributes, parent?: EngineSpan): EngineSpan;
}

export interface EngineSpan {
  addEvent(name: string, attributes?: SpanAttributes): void;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed. */
  fail(message: string): void;
  end(): void;
}

/** `op` as a walk span named `engine <name>` when its options carry a tracer; `op` itself otherwise. */
export function traced<O extends EngineOptions | ApplyOptions, A extends unknown[], R>(name: string, op: (opts: O, ...rest: A) => Promise<R>): (opts: O, ...rest: A) => Promise<R> {
  return async (opts, ...rest) => {
    const tracer = opts.tracer;
    if (!tracer) return op(opts, ...rest);
    const walk = tracer.startSpan(`engine ${name}`, { "planton.engine.operation": name, "planton.engine.parallelism": opts.parallelism ?? 10 });
    const resources = new Map<string, EngineSpan>();
    const emit = (line: UiMessage) => {
      onLine(tracer, walk, resources, line);
      opts.emit?.(line);
    };
    try {
      const result = await op({ ...opts, emit }, ...rest);
      walk.end();
      return result;
    } catch (err) {
      walk.fail(err instanceof Error ? err.message : String(err));
      walk.end();
      throw err;
    } finally {
      for (const s of resources.values()) s.end();
    }
  };
}

function onLine(tracer: EngineTracer, walk: EngineSpan, resources: Map<string, EngineSpan>, line: UiMessage): void {
  switch (line.type) {
    case "apply_start":
    case "refresh_start": {
      const address = line.hook.resource.addr;
      const action = line.type === "apply_start" ? line.hook.action : "refresh";
      resources.set(address, tracer.startSpan(`${action} ${address}`, { "planton.resource.address": address, "planton.resource.type": line.hook.resource.resource_type, "planton.resource.action": action }, walk));
      return;
    }
    case "apply_complete":
    case "apply_errored":
    case "refresh_complete": {
      const span = resources.get(line.hook.resource.addr);
      if (!span) return;
      resources.delete(line.hook.resource.addr);
      if (line.type === "apply_errored") span.fail(line["@message"]);
      span.end();
      return;
    }
    case "planned_change":
      walk.addEvent("planned_change", { "planton.resource.address": line.change.resource.addr, "planton.resource.action": line.change.action });
      return;
    case "resource_drift":
      walk.addEvent("drift", { "planton.resource.address": line.change.resource.addr, "planton.resource.action": line.change.action });
      return;
    case "change_summary":
      walk.setAttributes({ "planton.changes.add": line.changes.add, "planton.changes.change": line.changes.change, "planton.changes.remove": line.changes.remove });
      return;
    case "diagnostic":
      if (line.diagnostic.severity === "error") walk.addEvent("error", { message: line.diagnostic.summary });
      return;
  }
}
