export type PlantonErrorCode = "BAD_REQUEST" | "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "CONFLICT" | "PRECONDITION_FAILED";

/**
 * A refusal in the product's voice: says what did not happen, why, and how to fix it.
 * `field` names the form field it belongs to, so the console can show it beside that field.
 */
export class PlantonError extends Error {
  constructor(
    readonly code: PlantonErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = "PlantonError";
  }
}

export const notFound = (what: string, fix: string) => new PlantonError("NOT_FOUND", `${what} was not found. ${fix}`);
export const conflict = (message: string, field?: string) => new PlantonError("CONFLICT", message, field);
export const badRequest = (message: string, field?: string) => new PlantonError("BAD_REQUEST", message, field);
export const forbidden = (message: string) => new PlantonError("FORBIDDEN", message);

/** Postgres unique violation (23505), as either driver reports it. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return e?.code === "23505" || e?.cause?.code === "23505";
}
