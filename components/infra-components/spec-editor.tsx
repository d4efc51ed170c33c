"use client";
import { useId, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import type { SpecField } from "@/lib/catalog";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Checkbox, TextAreaField, TextField } from "@/components/ui/field";
import { SENSITIVE_VALUE } from "@/lib/secrets";

const shown = (f: SpecField, v: unknown) => (f.type === "json" ? JSON.stringify(v) : String(v));

/**
 * Form fields for a kind's spec, one per field of its schema, with each field's error beside it.
 * `json` fields (a module's lists, maps and objects) are JSON in a textarea, checked as typed: what does
 * not parse is reported through `onJsonErrors` (keyed `spec.<name>`) and kept out of the spec.
 * Sensitive fields take a `$secret/NAME` reference, picked from the organization's secrets.
 */
export function SpecEditor({
  fields,
  value,
  onChange,
  errors,
  disabled,
  onJsonErrors,
}: {
  fields: SpecField[];
  value: Record<string, unknown>;
  onChange: (v: Record<string, unknown>) => void;
  errors: Record<string, string>;
  disabled?: boolean;
  onJsonErrors?: (errors: Record<string, string>) => void;
}) {
  const [raw, setRaw] = useState<Record<string, string>>({});
  const [jsonErrors, setJsonErrors] = useState<Record<string, string>>({});
  const anySensitive = fields.some((f) => f.sensitive);
  const set = (name: string, v: unknown) => {
    const next = { ...value };
    if (v === undefined || v === "") delete next[name];
    else next[name] = v;
    onChange(next);
  };
  const setJson = (f: SpecField, text: string) => {
    setRaw((r) => ({ ...r, [f.name]: text }));
    const key = `spec.${f.name}`;
    const nextErrors = { ...jsonErrors };
    delete nextErrors[key];
    if (!text.trim()) set(f.name, undefined);
    else {
      try {
        set(f.name, JSON.parse(text));
      } catch (err) {
        nextErrors[key] = `${f.name} is not valid JSON: ${(err as Error).message}`;
      }
    }
    setJsonErrors(nextErrors);
    onJsonErrors?.(nextErrors);
  };
  const secretsList = useSecretRefs(anySensitive);
  return (
    <div className="grid gap-4 sm:grid-cols-2">
      {secretsList.datalist}
      {fields.map((f) => {
        const error = jsonErrors[`spec.${f.name}`] ?? errors[`spec.${f.name}`];
        const hint = [f.description, f.hclType && f.type === "json" ? `JSON of type ${f.hclType}.` : "", f.required ? "" : f.default !== undefined ? `Default: ${f.sensitive ? SENSITIVE_VALUE : shown(f, f.default)}.` : "Optional."].filter(Boolean).join(" ");
        if (f.type === "boolean") {
          return (
            <div key={f.name} className="sm:col-span-2">
              <Checkbox label={f.name} description={hint} checked={Boolean(value[f.name] ?? f.default ?? false)} onChange={(v) => set(f.name, v)} disabled={disabled} id={`spec-${f.name}`} />
              {error && <p role="alert" className="mt-1 text-xs text-rose-600">{error}</p>}
            </div>
          );
        }
        const current = value[f.name];
        if (f.type === "json") {
          return (
            <div key={f.name} className="sm:col-span-2">
              <TextAreaField
                id={`spec-${f.name}`}
                label={`${f.name}${f.required ? " *" : ""}`}
                hint={hint}
                error={error}
                disabled={disabled}
                rows={4}
                spellCheck={false}
                placeholder={f.default !== undefined ? JSON.stringify(f.default, null, 2) : f.hclType?.startsWith("map") || f.hclType?.startsWith("object") ? '{"key": "value"}' : '["a", "b"]'}
                value={raw[f.name] ?? (current === undefined ? "" : JSON.stringify(current, null, 2))}
                onChange={(e) => setJson(f, e.target.value)}
              />
            </div>
          );
        }
        return (
          <TextField
            key={f.name}
            id={`spec-${f.name}`}
            label={`${f.name}${f.required ? " *" : ""}`}
            hint={f.sensitive ? <SensitiveHint base={hint} hasSecrets={secretsList.count > 0} /> : hint}
            error={error}
            disabled={disabled}
            type={f.type === "number" ? "number" : "text"}
            min={f.min}
            max={f.max}
            list={f.sensitive && f.type === "string" ? secretsList.id : undefined}
            autoComplete={f.sensitive ? "off" : undefined}
            placeholder={f.sensitive ? "$secret/NAME" : f.default !== undefined ? String(f.default) : undefined}
            className={f.sensitive ? "font-mono" : undefined}
            value={current === undefined ? "" : String(current)}
            onChange={(e) => set(f.name, f.type === "number" ? (e.target.value === "" ? undefined : Number(e.target.value)) : e.target.value)}
          />
        );
      })}
    </div>
  );
}

function SensitiveHint({ base, hasSecrets }: { base: string; hasSecrets: boolean }) {
  return (
    <>
      {base} <span className="font-medium text-amber-700">Sensitive:</span> give a secret reference, <code className="font-mono">$secret/NAME</code>
      {hasSecrets ? " (pick one from the list)" : ""}, so the value stays in the secret store; create secrets in Settings → Secrets &amp; Variables.
    </>
  );
}

/** The organization's secrets as `$secret/NAME` suggestions for sensitive fields (read only when a field needs them). */
function useSecretRefs(enabled: boolean) {
  const org = useOrg();
  const trpc = useTRPC();
  const id = useId();
  const secrets = useQuery({ ...trpc.secrets.list.queryOptions({ org: org.slug }), enabled });
  const names = secrets.data?.map((s) => s.name) ?? [];
  return {
    id,
    count: names.length,
    datalist: enabled ? (
      <datalist id={id}>
        {names.map((n) => (
          <option key={n} value={`$secret/${n}`} />
        ))}
      </datalist>
    ) : null,
  };
}
