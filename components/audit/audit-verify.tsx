"use client";
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { ShieldAlert, ShieldCheck } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Button } from "@/components/ui/button";
import { ErrorState } from "@/components/ui/page";
import { CopyField } from "@/components/settings/shared";

/** The organization's chain checked on the server (audit.verify), asked only when the button is pressed: a check reads the whole chain. */
export function useAuditVerify() {
  const org = useOrg();
  const trpc = useTRPC();
  return useQuery({ ...trpc.audit.verify.queryOptions({ org: org.slug }), enabled: false, retry: false, staleTime: Infinity });
}
type Verify = ReturnType<typeof useAuditVerify>;

export function AuditVerifyButton({ verify }: { verify: Verify }) {
  return (
    <Button variant="secondary" busy={verify.isFetching} onClick={() => void verify.refetch()} title="Recompute every link of the chain and name the first that does not hold">
      <ShieldCheck className="h-4 w-4" /> {verify.data ? "Verify again" : "Verify the record"}
    </Button>
  );
}

/** What the check found: the count and head hash to keep, or the first broken link. */
export function AuditVerifyResult({ verify }: { verify: Verify }) {
  const org = useOrg();
  const v = verify.data;
  if (verify.isFetching) return null;
  if (verify.error) return <ErrorState error={verify.error} retry={() => void verify.refetch()} />;
  if (!v) return null;
  return (
    <div data-testid="audit-verify" className="mb-6">
        <div role="status" className={v.ok ? "rounded-lg bg-emerald-50 p-4 text-sm text-emerald-900 ring-1 ring-emerald-200" : "rounded-lg bg-rose-50 p-4 text-sm text-rose-900 ring-1 ring-rose-200"}>
          {v.ok ? (
            <>
              <p className="flex items-center gap-2 font-medium">
                <ShieldCheck className="h-4 w-4" /> The record holds: {v.checked} {v.checked === 1 ? "event" : "events"} checked, from {v.from.seq > 0 ? `checkpoint #${v.from.seq}` : "the first"} to #{v.head.seq}.
              </p>
              <p className="mt-1 text-emerald-800">Keep the head hash outside Planton: a later check that ends at the same hash proves nothing before it was rewritten.</p>
              <div className="mt-3 max-w-3xl">
                <CopyField label={`Head hash (event #${v.head.seq})`} value={v.head.hash} />
              </div>
            </>
          ) : (
            <>
              <p className="flex items-center gap-2 font-medium">
                <ShieldAlert className="h-4 w-4" /> The record does not hold{v.broken ? ` at event #${v.broken.seq}` : ""}.
              </p>
              {v.broken && (
                <>
                  <p className="mt-1">{v.broken.message}</p>
                  {(v.broken.expected || v.broken.found) && (
                    <dl className="mt-2 grid grid-cols-[6rem_1fr] gap-1 font-mono text-xs">
                      <dt>expected</dt>
                      <dd className="break-all">{v.broken.expected ?? "—"}</dd>
                      <dt>found</dt>
                      <dd className="break-all">{v.broken.found ?? "—"}</dd>
                    </dl>
                  )}
                  <Link href={`/o/${org.slug}/audit?seq=${v.broken.seq}`} className="mt-2 inline-block font-medium underline">
                    Show event #{v.broken.seq}
                  </Link>
                </>
              )}
            </>
          )}
        </div>
    </div>
  );
}
