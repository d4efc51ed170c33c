"use client";
import Link from "next/link";
import type { AuditFilter } from "@/lib/api/audit-schemas";
import { useOrg } from "@/components/shell/org-context";
import { Card } from "@/components/ui/page";
import { auditQueryString } from "./audit-filter";
import { AuditTimeline } from "./audit-timeline";

/** A component's or a job's slice of the audit record, as the Audit page shows it, with the way there. */
export function ActivityTab({ filter, what }: { filter: Pick<AuditFilter, "component" | "target">; what: string }) {
  const org = useOrg();
  return (
    <Card
      title="Activity"
      description={`Everything the audit record holds about ${what}, newest first.`}
      actions={
        <Link href={`/o/${org.slug}/audit?${auditQueryString(filter)}`} className="text-sm font-medium text-indigo-600 hover:underline">
          Open in Audit
        </Link>
      }
    >
      <div className="-mx-5 -my-4">
        <AuditTimeline filter={filter} label="Activity" empty={{ title: "No events yet", description: `Changes to ${what} are recorded here as they happen.` }} />
      </div>
    </Card>
  );
}
