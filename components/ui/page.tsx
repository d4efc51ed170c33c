import type { ReactNode } from "react";
import { AlertTriangle, Inbox } from "lucide-react";
import { Spinner } from "./spinner";
import { cn } from "./cn";

export function PageHeader({ title, description, actions, breadcrumb }: { title: ReactNode; description?: ReactNode; actions?: ReactNode; breadcrumb?: ReactNode }) {
  return (
    <div className="mb-6 border-b border-slate-200 pb-5">
      {breadcrumb && <div className="mb-2 text-sm text-slate-500">{breadcrumb}</div>}
      <div className="flex flex-wrap items-start justify-between gap-4">
        <div className="min-w-0 flex-1">
          <h1 className="truncate text-2xl font-semibold tracking-tight text-slate-900">{title}</h1>
          {description && <div className="mt-1 text-sm text-slate-600">{description}</div>}
        </div>
        {actions && <div className="flex shrink-0 items-center gap-2">{actions}</div>}
      </div>
    </div>
  );
}

/** A white panel; `flush` drops the padding, for a table that runs edge to edge. */
export function Card({ title, description, actions, children, className, flush }: { title?: ReactNode; description?: ReactNode; actions?: ReactNode; children: ReactNode; className?: string; flush?: boolean }) {
  return (
    <section className={cn("rounded-lg bg-white shadow-sm ring-1 ring-slate-200", flush && "overflow-hidden", className)}>
      {(title || actions) && (
        <header className="flex items-start justify-between gap-4 border-b border-slate-100 px-5 py-4">
          <div>
            {title && <h2 className="text-base font-semibold text-slate-900">{title}</h2>}
            {description && <p className="mt-0.5 text-sm text-slate-500">{description}</p>}
          </div>
          {actions}
        </header>
      )}
      <div className={flush ? undefined : "px-5 py-4"}>{children}</div>
    </section>
  );
}

export function EmptyState({ title, description, action, icon }: { title: string; description?: ReactNode; action?: ReactNode; icon?: ReactNode }) {
  return (
    <div className="flex flex-col items-center justify-center px-6 py-12 text-center">
      <div className="mb-3 text-slate-400">{icon ?? <Inbox className="h-8 w-8" />}</div>
      <h3 className="text-sm font-semibold text-slate-900">{title}</h3>
      {description && <p className="mt-1 max-w-md text-sm text-slate-500">{description}</p>}
      {action && <div className="mt-4">{action}</div>}
    </div>
  );
}

export function LoadingState({ label = "Loading…" }: { label?: string }) {
  return (
    <div role="status" className="flex items-center justify-center gap-2 px-6 py-12 text-sm text-slate-500">
      <Spinner /> {label}
    </div>
  );
}

export function ErrorState({ error, retry }: { error: { message: string } | null | undefined; retry?: () => void }) {
  return (
    <div role="alert" className="m-4 flex items-start gap-3 rounded-md bg-rose-50 p-4 text-sm text-rose-800 ring-1 ring-rose-200">
      <AlertTriangle className="mt-0.5 h-4 w-4 shrink-0" />
      <div className="flex-1">
        <p className="font-medium">This could not be loaded.</p>
        <p className="mt-0.5">{error?.message ?? "Unknown error."}</p>
      </div>
      {retry && (
        <button type="button" onClick={retry} className="rounded px-2 py-1 text-xs font-medium underline hover:bg-rose-100">
          Try again
        </button>
      )}
    </div>
  );
}

/** Renders a query's loading and error states, and its data once it has some. */
export function QueryState<T>({ query, children, loading }: { query: { data: T | undefined; isPending: boolean; error: { message: string } | null; refetch: () => unknown }; children: (data: T) => ReactNode; loading?: string }) {
  if (query.isPending) return <LoadingState label={loading} />;
  if (query.error || query.data === undefined) return <ErrorState error={query.error} retry={() => query.refetch()} />;
  return <>{children(query.data)}</>;
}
