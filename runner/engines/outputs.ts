import type { StepContext } from "./adapter";

/**
 * Sends a step's outputs to the server, which stores sensitive values as secrets and answers with
 * `$secret/…` references; only that answer becomes an `outputs` event.
 */
export async function reportOutputs(ctx: StepContext, outputs: Record<string, { value: unknown; sensitive?: boolean }>): Promise<void> {
  const names = Object.keys(outputs);
  if (names.length === 0) return;
  const body: Record<string, { value: unknown; sensitive: boolean }> = {};
  for (const [name, o] of Object.entries(outputs)) {
    body[name] = { value: o.value, sensitive: Boolean(o.sensitive) };
    if (o.sensitive) ctx.redactor.add(o.value);
  }
  const answer = await ctx.job.outputs(ctx.attemptId, body);
  // Belt and braces: whatever the server answers, a sensitive value never rides in an event.
  const safe: Record<string, { value: unknown; sensitive: boolean }> = {};
  for (const [name, o] of Object.entries(answer.outputs ?? {})) {
    safe[name] = o.sensitive && !(typeof o.value === "string" && o.value.startsWith("$secret/")) ? { value: "(sensitive value)", sensitive: true } : o;
  }
  ctx.emit({ type: "outputs", payload: { outputs: safe } });
}
