/** The field errors a tRPC refusal carries (see server/trpc/init.ts), keyed by field path. */
export function fieldErrorsOf(err: unknown): Record<string, string> {
  const data = (err as { data?: { fieldErrors?: Record<string, string> } } | null)?.data;
  return data?.fieldErrors ?? {};
}

export function messageOf(err: unknown): string {
  return (err as { message?: string } | null)?.message ?? "Something went wrong.";
}

/** Shows a form's refusal: each field error beside its field, else the message in the form's alert. */
export function showFormRefusal(err: unknown, setErrors: (e: Record<string, string>) => void, setAlert: (m: string | null) => void): void {
  const fields = fieldErrorsOf(err);
  setErrors(fields);
  setAlert(Object.keys(fields).length ? null : messageOf(err));
}
