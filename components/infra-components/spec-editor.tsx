"use client";
import type { SpecField } from "@/lib/catalog";
import { Checkbox, TextField } from "@/components/ui/field";

/** Form fields for a kind's spec, one per field of its schema, with each field's error beside it. */
export function SpecEditor({ fields, value, onChange, errors, disabled }: { fields: SpecField[]; value: Record<string, unknown>; onChange: (v: Record<string, unknown>) => void; errors: Record<string, string>; disabled?: boolean }) {
  const set = (name: string, v: unknown) => {
    const next = { ...value };
    if (v === undefined || v === "") delete next[name];
    else next[name] = v;
    onChange(next);
  };
  return (
    <div className="grid gap-4 sm:grid-cols-2">
      {fields.map((f) => {
        const error = errors[`spec.${f.name}`];
        const hint = `${f.description}${f.required ? "" : f.default !== undefined ? ` Default: ${String(f.default)}.` : " Optional."}`;
        if (f.type === "boolean") {
          return (
            <div key={f.name} className="sm:col-span-2">
              <Checkbox label={f.name} description={hint} checked={Boolean(value[f.name] ?? f.default ?? false)} onChange={(v) => set(f.name, v)} disabled={disabled} id={`spec-${f.name}`} />
              {error && <p role="alert" className="mt-1 text-xs text-rose-600">{error}</p>}
            </div>
          );
        }
        const current = value[f.name];
        return (
          <TextField
            key={f.name}
            id={`spec-${f.name}`}
            label={`${f.name}${f.required ? " *" : ""}`}
            hint={hint}
            error={error}
            disabled={disabled}
            type={f.type === "number" ? "number" : "text"}
            min={f.min}
            max={f.max}
            placeholder={f.default !== undefined ? String(f.default) : undefined}
            value={current === undefined ? "" : String(current)}
            onChange={(e) => set(f.name, f.type === "number" ? (e.target.value === "" ? undefined : Number(e.target.value)) : e.target.value)}
          />
        );
      })}
    </div>
  );
}
