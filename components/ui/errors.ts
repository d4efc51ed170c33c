/** The field errors a tRPC refusal carries (see server/trpc/init.ts), keyed by field path. */
export function fieldErrorsOf(err: unknown): Record<string, string> {
  const data = (err as { data?: { fieldErrors?: Record<string, string> } } | null)?.data;
  return data?.fieldErrors ?? {};
}

export function messageOf(err: unknown): string {
  return (err as { message?: string } | null)?.message ?? "Something went wrong.";
}
