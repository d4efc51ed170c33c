-- Where a job's trace continues (lib/telemetry.ts): the W3C traceparent of its create span, when the console traces.
ALTER TABLE "infra_jobs" ADD COLUMN "trace_parent" text;
