import { SENSITIVE_VALUE } from "../lib/secrets";

/** Knows the secret values a job has seen and masks them in anything bound for an event or a log. */
export class Redactor {
  private readonly secrets = new Set<string>();

  /** Remembers a secret value (values shorter than 4 characters would mask ordinary words, so they are kept whole-value only). */
  add(value: unknown): void {
    if (typeof value === "string" && value.length > 0) {
      this.secrets.add(value);
      // A module may carry a secret base64-encoded (base64encode, a data URI): mask that spelling too.
      if (value.length >= 4) this.secrets.add(Buffer.from(value, "utf8").toString("base64").replace(/=+$/, ""));
    } else if (value !== null && typeof value === "object") for (const v of Object.values(value)) this.add(v);
  }

  get size(): number {
    return this.secrets.size;
  }

  text(s: string): string {
    let out = s;
    for (const secret of [...this.secrets].sort((a, b) => b.length - a.length)) {
      if (secret.length < 4) {
        if (out === secret) out = SENSITIVE_VALUE;
      } else if (out.includes(secret)) out = out.split(secret).join(SENSITIVE_VALUE);
    }
    return out;
  }

  value<T>(v: T): T {
    if (this.secrets.size === 0) return v;
    if (typeof v === "string") return this.text(v) as T;
    if (Array.isArray(v)) return v.map((x) => this.value(x)) as T;
    if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.value(x)])) as T;
    return v;
  }
}
