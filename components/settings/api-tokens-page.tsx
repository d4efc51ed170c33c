"use client";
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { KeyRound, Plus, Trash2 } from "lucide-react";
import { useTRPC } from "@/lib/trpc/client";
import { useOrg } from "@/components/shell/org-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { showFormRefusal } from "@/components/ui/errors";
import { TextField } from "@/components/ui/field";
import { QueryTable, type Column } from "@/components/ui/data-table";
import { Card, EmptyState, PageHeader } from "@/components/ui/page";
import { relativeTime } from "@/components/ui/time";
import { useDeleteDialog } from "./delete-dialog";
import { CopyField, FormAlert } from "./shared";

interface Token {
  id: string;
  name: string;
  prefix: string;
  owner: string;
  mine: boolean;
  expired: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
}

export function ApiTokensPage() {
  const org = useOrg();
  const trpc = useTRPC();
  const mine = useQuery(trpc.me.apiTokens.list.queryOptions({ org: org.slug }));
  const all = useQuery({ ...trpc.apiTokens.list.queryOptions({ org: org.slug }), enabled: org.can("admin") });
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<{ name: string; token: string } | null>(null);
  const revokeMine = useMutation(trpc.me.apiTokens.revoke.mutationOptions());
  const revokeAny = useMutation(trpc.apiTokens.revoke.mutationOptions());
  const revoke = useDeleteDialog<Token, { org: string; id: string }>({
    title: (t) => `Revoke ${t.name}?`,
    description: (t) => `Anything using ${t.prefix}… stops working at once. This cannot be undone.`,
    confirmLabel: "Revoke token",
    // One's own token through one's own procedure; an admin revokes anyone's through the admin one.
    mutation: (t) => (t.mine ? revokeMine : revokeAny),
    variables: (t) => ({ org: org.slug, id: t.id }),
    refresh: [trpc.me.apiTokens.list.queryKey(), trpc.apiTokens.list.queryKey()],
    done: (t) => `Revoked ${t.name}`,
  });

  return (
    <>
      <PageHeader
        title="API tokens"
        description={
          <>
            Tokens let the planton CLI and scripts act as you in {org.name}, with your role ({org.role}). Send one as <code className="rounded bg-slate-100 px-1 font-mono text-xs">Authorization: Bearer plt_…</code>.
          </>
        }
        actions={
          <Button onClick={() => setCreating(true)}>
            <Plus className="h-4 w-4" /> New token
          </Button>
        }
      />
      <div className="space-y-6">
        <Card title="Your tokens" flush>
          <QueryTable
            query={mine}
            loading="Loading tokens…"
            empty={<EmptyState icon={<KeyRound className="h-8 w-8" />} title="You have no tokens" description="Create one for the CLI on your laptop or for a CI pipeline; it is shown once." action={<Button onClick={() => setCreating(true)}>Create a token</Button>} />}
            label="Your tokens"
            rowKey={(t) => t.id}
            columns={tokenColumns(revoke.ask, false)}
          />
        </Card>
        {org.can("admin") && (
          <Card title={`Every token in ${org.name}`} description="As an admin you can revoke any member's token, for instance when a laptop is lost." flush>
            <QueryTable
              query={all}
              loading="Loading tokens…"
              empty={<EmptyState icon={<KeyRound className="h-8 w-8" />} title="No member has a token" />}
              label="Every token in the organization"
              rowKey={(t) => t.id}
              columns={tokenColumns(revoke.ask, true)}
            />
          </Card>
        )}
      </div>
      {creating && (
        <CreateTokenForm
          onClose={() => setCreating(false)}
          onCreated={(t) => {
            setCreating(false);
            setShown(t);
          }}
        />
      )}
      <Dialog
        open={!!shown}
        onClose={() => setShown(null)}
        title={`Token ${shown?.name} created`}
        description="Copy it now: it is shown only once and cannot be retrieved later. Planton keeps only a hash of it."
        footer={<Button onClick={() => setShown(null)}>I have copied it</Button>}
      >
        {shown && <CopyField label="API token" value={shown.token} />}
      </Dialog>
      {revoke.dialog}
    </>
  );
}

function tokenColumns(onRevoke: (t: Token) => void, showOwner: boolean): (Column<Token> | false)[] {
  return [
    { id: "name", header: "Name", cellClassName: "font-medium text-slate-900", cell: (t) => t.name },
    showOwner && { id: "owner", header: "Owner", cell: (t) => t.owner },
    { id: "token", header: "Token", cellClassName: "font-mono text-xs", cell: (t) => `${t.prefix}…` },
    { id: "created", header: "Created", title: (t) => new Date(t.createdAt).toLocaleString(), cell: (t) => relativeTime(t.createdAt) },
    { id: "lastUsed", header: "Last used", cell: (t) => (t.lastUsedAt ? <span title={new Date(t.lastUsedAt).toLocaleString()}>{relativeTime(t.lastUsedAt)}</span> : <span className="text-slate-400">never</span>) },
    {
      id: "expires",
      header: "Expires",
      cell: (t) =>
        t.expired ? (
          <Badge tone="red">expired</Badge>
        ) : t.expiresAt ? (
          <span title={new Date(t.expiresAt).toLocaleString()}>{new Date(t.expiresAt).toLocaleDateString()}</span>
        ) : (
          <span className="text-slate-500">never</span>
        ),
    },
    {
      id: "actions",
      header: "Actions",
      className: "text-right",
      cell: (t) => (
        <Button variant="ghost" size="sm" onClick={() => onRevoke(t)} aria-label={`Revoke ${t.name}${showOwner ? ` of ${t.owner}` : ""}`}>
          <Trash2 className="h-3.5 w-3.5" /> Revoke
        </Button>
      ),
    },
  ];
}

function CreateTokenForm({ onClose, onCreated }: { onClose: () => void; onCreated: (t: { name: string; token: string }) => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [days, setDays] = useState("90");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const create = useMutation(
    trpc.me.apiTokens.create.mutationOptions({
      onSuccess: async (r) => {
        await queryClient.invalidateQueries({ queryKey: trpc.me.apiTokens.list.queryKey() });
        await queryClient.invalidateQueries({ queryKey: trpc.apiTokens.list.queryKey() });
        onCreated({ name: r.name, token: r.token });
      },
      onError: (err) => {
        showFormRefusal(err, setErrors, setAlert);
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    const local: Record<string, string> = {};
    if (!name.trim()) local.name = "Name the token after where it is used, like laptop-cli or ci";
    if (days && !/^\d+$/.test(days)) local.expiresInDays = "Expiry must be a whole number of days, or empty for none";
    setErrors(local);
    if (Object.keys(local).length) return;
    create.mutate({ org: org.slug, name: name.trim(), expiresInDays: days ? Number(days) : undefined });
  }
  return (
    <Dialog open onClose={onClose} title="New API token" description={`It acts as you (${org.user.email}) in ${org.slug} only.`}>
      <form onSubmit={submit} noValidate className="space-y-4">
        <TextField label="Name" value={name} onChange={(e) => setName(e.target.value)} error={errors.name} placeholder="laptop-cli" autoFocus />
        <TextField label="Expires in (days)" inputMode="numeric" value={days} onChange={(e) => setDays(e.target.value)} error={errors.expiresInDays} hint="Leave empty for a token that works until revoked." />
        <FormAlert message={alert} />
        <div className="flex justify-end gap-2 pt-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" busy={create.isPending}>
            Create token
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
