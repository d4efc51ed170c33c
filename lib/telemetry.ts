// OpenTelemetry traces, for the console and the runner alike: one trace per job (create → claim → each
// step → the engine's walks), exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set. Unset, no
// SDK is started: every helper here returns at its first line, and @opentelemetry/api's tracer is its no-op.
// The trace context crosses processes as a W3C `traceparent` (stored on the job, handed over in the claim).
import { context, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { envVar, urlOf } from "./env";

/** The variable that switches tracing on; the SDK reads the other OTEL_* settings (headers, batch delay, service name) itself. */
export const TRACING_ENV = {
  OTEL_EXPORTER_OTLP_ENDPOINT: envVar(
    urlOf("http:", "https:"),
    "http://otel-collector:4318",
    "an OpenTelemetry collector's OTLP/HTTP address: jobs are traced (spans go to <endpoint>/v1/traces); unset, tracing is off",
  ),
};

interface TracingState {
  provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> };
  tracer: Tracer;
}

// One per process, kept on globalThis so Next.js's reloads and separately bundled chunks share it.
const g = globalThis as unknown as { __plantonTracing?: TracingState | null; __plantonTracingStart?: Promise<TracingState | null> };

/** True once `startTracing` started the SDK in this process. */
export const tracingOn = (): boolean => !!g.__plantonTracing;

/**
 * Starts the SDK when `env.OTEL_EXPORTER_OTLP_ENDPOINT` is set (the caller checked it with the rest of its
 * configuration); otherwise does nothing. Safe to call more than once.
 */
export function startTracing(serviceName: string, env: Record<string, string | undefined> = process.env): Promise<boolean> {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return Promise.resolve(false);
  g.__plantonTracingStart ??= (async () => {
    const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
    ]);
    const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` });
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || serviceName }),
      spanProcessors: [new BatchSpanProcessor(exporter)],
    });
    trace.setGlobalTracerProvider(provider);
    g.__plantonTracing = { provider, tracer: provider.getTracer("planton") };
    return g.__plantonTracing;
  })();
  return g.__plantonTracingStart.then((s) => !!s);
}

/** The process's tracer: the no-op one while tracing is off. */
export const tracer = (): Tracer => g.__plantonTracing?.tracer ?? trace.getTracer("planton");

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A span's context as a W3C `traceparent` (`00-<trace id>-<span id>-<flags>`), or undefined when tracing is off. */
export function traceparentOf(span: Span | undefined): string | undefined {
  if (!span || !tracingOn()) return undefined;
  const c = span.spanContext();
  if (!trace.isSpanContextValid(c)) return undefined;
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The context whose parent is the span a `traceparent` names (a root context when there is none, or it is malformed). */
export function contextOf(traceparent: string | null | undefined): Context {
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!m) return context.active();
  const spanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true };
  return trace.isSpanContextValid(spanContext) ? trace.setSpanContext(context.active(), spanContext) : context.active();
}

/** Starts a span under `parent` (a span, a traceparent, or nothing for a new trace); undefined when tracing is off. */
export function startSpan(name: string, parent: Span | string | null | undefined, attributes?: Attributes): Span | undefined {
  if (!tracingOn()) return undefined;
  const ctx = typeof parent === "string" || parent == null ? contextOf(parent) : trace.setSpan(context.active(), parent);
  return tracer().startSpan(name, { attributes }, ctx);
}

/** Ends a span, marking it failed with `error` when given. */
export function endSpan(span: Span | undefined, error?: unknown): void {
  if (!span) return;
  if (error !== undefined) {
    const message = error instanceof Error ? error.message : String(error);
    span.setStatus({ code: 2, message }); // SpanStatusCode.ERROR
  }
  span.end();
}

/** `work`, with `span` ended when it settles (failed when it rejects). */
export function spanned<T>(span: Span | undefined, work: Promise<T>): Promise<T> {
  if (!span) return work;
  return work.then(
    (value) => (endSpan(span), value),
    (err: unknown) => {
      endSpan(span, err);
      throw err;
    },
  );
}

/** Runs `fn` in a span (none when tracing is off), ending it when `fn` settles. */
export async function inSpan<T>(name: string, parent: Span | string | null | undefined, attributes: Attributes, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  const span = startSpan(name, parent, attributes);
  try {
    const value = await fn(span);
    endSpan(span);
    return value;
  } catch (err) {
    endSpan(span, err);
    throw err;
  }
}

/** Sends the spans ended so far (a runner does after each job, so a trace is whole soon after the job ends). */
export async function flushTraces(): Promise<void> {
  await g.__plantonTracing?.provider.forceFlush().catch(() => {});
}

/** Flushes and stops the SDK (a process that is exiting). */
export async function stopTracing(): Promise<void> {
  const s = g.__plantonTracing;
  if (!s) return;
  g.__plantonTracing = null;
  g.__plantonTracingStart = undefined;
  await s.provider.shutdown().catch(() => {});
}
