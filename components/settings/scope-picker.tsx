"use client";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Checkbox } from "@/components/ui/field";
import { QueryState } from "@/components/ui/page";

export type Scope = "organization" | "environment";

/**
 * Who may use something (a connection, a secret, a variable): the whole organization, or the
 * environments ticked. One picker, so every scope in the console reads and works the same.
 */
export function ScopePicker({
  label,
  scope,
  chosen,
  onScope,
  onChosen,
  error,
  wholeHint = "Jobs in every environment, including ones created later.",
  chosenHint = "Only jobs of the environments ticked below; any other job is refused before it runs.",
}: {
  label: string;
  scope: Scope;
  chosen: string[];
  onScope: (s: Scope) => void;
  onChosen: (envs: string[]) => void;
  error?: string;
  wholeHint?: string;
  chosenHint?: string;
}) {
  const org = useOrg();
  const trpc = useTRPC();
  const envs = useQuery(trpc.environments.list.queryOptions({ org: org.slug }));
  const toggle = (name: string, on: boolean) => onChosen(on ? [...chosen, name] : chosen.filter((n) => n !== name));
  return (
    <div className="space-y-2">
      <div role="radiogroup" aria-label={label} className="space-y-2">
        <p className="text-sm font-medium text-slate-700">Who may use it</p>
        <label className="flex items-start gap-3 text-sm">
          <input type="radio" name="scope" checked={scope === "organization"} onChange={() => onScope("organization")} className="mt-0.5" />
          <span>
            <span className="font-medium text-slate-800">The whole organization</span>
            <span className="block text-xs text-slate-500">{wholeHint}</span>
          </span>
        </label>
        <label className="flex items-start gap-3 text-sm">
          <input type="radio" name="scope" checked={scope === "environment"} onChange={() => onScope("environment")} className="mt-0.5" />
          <span>
            <span className="font-medium text-slate-800">Chosen environments</span>
            <span className="block text-xs text-slate-500">{chosenHint}</span>
          </span>
        </label>
      </div>
      {scope === "environment" && (
        <fieldset className="ml-6 space-y-2" aria-label="Environments">
          <QueryState query={envs}>
            {(list) => (
              <>
                {list.map((e) => (
                  <Checkbox key={e.id} label={e.name} description={e.description || undefined} checked={chosen.includes(e.name)} onChange={(on) => toggle(e.name, on)} />
                ))}
              </>
            )}
          </QueryState>
        </fieldset>
      )}
      {error && (
        <p role="alert" className="text-xs text-rose-600">
          {error}
        </p>
      )}
    </div>
  );
}
