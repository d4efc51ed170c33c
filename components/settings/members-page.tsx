"use client";
import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { KeyRound, Trash2, UserPlus, Users } from "lucide-react";
import { toast } from "sonner";
import { useTRPC } from "@/lib/trpc/client";
import { ROLE_DESCRIPTIONS, ROLES, type Role } from "@/lib/roles";
import { useOrg } from "@/components/shell/org-context";
import { Badge } from "@/components/ui/badge";
import { Button } from "@/components/ui/button";
import { Dialog } from "@/components/ui/dialog";
import { messageOf, showFormRefusal } from "@/components/ui/errors";
import { controlClass, SelectField, TextField } from "@/components/ui/field";
import { QueryTable } from "@/components/ui/data-table";
import { Card, EmptyState, PageHeader } from "@/components/ui/page";
import { relativeTime } from "@/components/ui/time";
import { useDeleteDialog } from "./delete-dialog";
import { CopyField, FormAlert, RoleNote } from "./shared";

interface Member {
  id: string;
  userId: string;
  name: string;
  email: string;
  role: Role;
  joinedAt: Date;
}

const ROLE_TONE = { admin: "indigo", engineer: "blue", viewer: "gray" } as const;

export function MembersPage() {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.members.list.queryOptions({ org: org.slug }));
  const [adding, setAdding] = useState(false);
  const [invited, setInvited] = useState<Invited | null>(null);
  const [roleErrors, setRoleErrors] = useState<Record<string, string>>({});
  const admin = org.can("admin");
  const remove = useDeleteDialog<Member, { org: string; id: string }>({
    title: (m) => `Remove ${m.email} from ${org.slug}?`,
    description: "They lose access to this organization at once, and their API tokens for it are revoked. Their account stays.",
    confirmLabel: "Remove member",
    mutation: useMutation(trpc.members.remove.mutationOptions()),
    variables: (m) => ({ org: org.slug, id: m.id }),
    refresh: [trpc.members.list.queryKey()],
    done: (m) => `Removed ${m.email}`,
  });
  // Resetting is as final as a delete for the member's password: the same confirm, then the new link.
  const reset = useDeleteDialog<Member, { org: string; id: string }>({
    title: (m) => `Reset the sign-in of ${m.email}?`,
    description: "Their password stops working and every session of theirs ends at once. You get a link to send them, with which they choose a new password; you never see or set it.",
    confirmLabel: "Reset sign-in",
    mutation: useMutation(
      trpc.members.resetSignIn.mutationOptions({
        onSuccess: (r) => setInvited({ email: r.email, title: `Sign-in reset for ${r.email}`, invitation: r.invitation }),
      }),
    ),
    variables: (m) => ({ org: org.slug, id: m.id }),
    refresh: [trpc.members.list.queryKey()],
    done: (m) => `Sign-in reset for ${m.email}`,
  });
  const changeRole = useMutation(
    trpc.members.changeRole.mutationOptions({
      onSuccess: async (_r, vars) => {
        setRoleErrors((e) => ({ ...e, [vars.id]: "" }));
        await queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey() });
        toast.success(`Role changed to ${vars.role}`);
      },
      onError: (err, vars) => {
        // Shown beside the role it concerns.
        setRoleErrors((e) => ({ ...e, [vars.id]: messageOf(err) }));
      },
    }),
  );

  return (
    <>
      <PageHeader
        title="Members and roles"
        description={
          <>
            Viewers read everything; engineers create components and run jobs; admins also manage settings, members, runners and state backends.
          </>
        }
        actions={
          admin && (
            <Button onClick={() => setAdding(true)}>
              <UserPlus className="h-4 w-4" /> Add member
            </Button>
          )
        }
      />
      <RoleNote need="admin" what="Adding members, changing roles and removing members" />
      <Card flush>
        <QueryTable
          query={list}
          loading="Loading members…"
          empty={<EmptyState icon={<Users className="h-8 w-8" />} title="No members" description="Add the people who work in this organization." />}
          label="Members"
          rowKey={(m) => m.id}
          rowClassName="align-top"
          columns={[
            {
              id: "name",
              header: "Name",
              cellClassName: "font-medium text-slate-900",
              cell: (m) => (
                <>
                  {m.name}
                  {m.email === org.user.email && <span className="ml-2 text-xs font-normal text-slate-500">(you)</span>}
                </>
              ),
            },
            { id: "email", header: "Email", cell: (m) => m.email },
            {
              id: "role",
              header: "Role",
              className: "whitespace-normal!",
              cell: (m) =>
                admin ? (
                  <div className="max-w-xs space-y-1">
                    <label htmlFor={`role-${m.id}`} className="sr-only">
                      Role of {m.email}
                    </label>
                    <select
                      id={`role-${m.id}`}
                      value={m.role}
                      disabled={changeRole.isPending && changeRole.variables?.id === m.id}
                      aria-invalid={!!roleErrors[m.id] || undefined}
                      aria-describedby={roleErrors[m.id] ? `role-${m.id}-error` : undefined}
                      onChange={(e) => changeRole.mutate({ org: org.slug, id: m.id, role: e.target.value as Role })}
                      className={controlClass(roleErrors[m.id]) + " py-1"}
                      style={{ width: "9rem" }}
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                    {roleErrors[m.id] && (
                      <p id={`role-${m.id}-error`} role="alert" className="whitespace-normal text-xs text-rose-600">
                        {roleErrors[m.id]}
                      </p>
                    )}
                  </div>
                ) : (
                  <Badge tone={ROLE_TONE[m.role]}>{m.role}</Badge>
                ),
            },
            { id: "joined", header: "Joined", title: (m) => new Date(m.joinedAt).toLocaleString(), cell: (m) => relativeTime(m.joinedAt) },
            admin && {
              id: "actions",
              header: "Actions",
              className: "text-right",
              cell: (m) => (
                <>
                  {m.email !== org.user.email && (
                    <Button variant="ghost" size="sm" onClick={() => reset.ask(m)} aria-label={`Reset sign-in of ${m.email}`}>
                      <KeyRound className="h-3.5 w-3.5" /> Reset sign-in
                    </Button>
                  )}
                  <Button variant="ghost" size="sm" onClick={() => remove.ask(m)} aria-label={`Remove ${m.email}`}>
                    <Trash2 className="h-3.5 w-3.5" /> Remove
                  </Button>
                </>
              ),
            },
          ]}
        />
      </Card>
      {adding && (
        <AddMemberForm
          onClose={() => setAdding(false)}
          onInvited={(i) => {
            setAdding(false);
            setInvited(i);
          }}
        />
      )}
      <InvitationDialog invited={invited} onClose={() => setInvited(null)} />
      {reset.dialog}
      {remove.dialog}
    </>
  );
}

interface Invited {
  email: string;
  title: string;
  invitation: { path: string; expiresAt: Date };
}

/** The link is shown once: only its hash is stored. The wording is the same whether or not the email had an account. */
function InvitationDialog({ invited, onClose }: { invited: Invited | null; onClose: () => void }) {
  const url = invited && typeof window !== "undefined" ? `${window.location.origin}${invited.invitation.path}` : "";
  return (
    <Dialog
      open={!!invited}
      onClose={onClose}
      title={invited?.title ?? ""}
      description={
        invited
          ? `Send ${invited.email} this link. It is shown only now, works once, until ${new Date(invited.invitation.expiresAt).toUTCString()}, and whoever opens it first uses it: send it only to them.`
          : ""
      }
      footer={<Button onClick={onClose}>Done</Button>}
    >
      {invited && <CopyField label="Invitation link" value={url} />}
    </Dialog>
  );
}


function AddMemberForm({ onClose, onInvited }: { onClose: () => void; onInvited: (i: Invited) => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("engineer");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [alert, setAlert] = useState<string | null>(null);
  const add = useMutation(
    trpc.members.add.mutationOptions({
      onSuccess: async (r) => {
        await queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey() });
        onInvited({ email: r.email, title: `Invitation created for ${r.email} (${r.role})`, invitation: r.invitation });
      },
      onError: (err) => {
        showFormRefusal(err, setErrors, setAlert);
      },
    }),
  );
  function submit(e: FormEvent) {
    e.preventDefault();
    if (!/^\S+@\S+\.\S+$/.test(email)) return setErrors({ email: "Enter an email address, like jane@example.com" });
    add.mutate({ org: org.slug, email, role });
  }
  return (
    <Dialog open onClose={onClose} title={`Add a member to ${org.name}`} description="You get an invitation link to send them. They join when they open it: someone new chooses their own password; someone with a Planton account signs in and accepts.">
      <form onSubmit={submit} noValidate className="space-y-4">
        <TextField label="Email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} error={errors.email} placeholder="jane@example.com" autoFocus />
        <SelectField label="Role" value={role} onChange={(e) => setRole(e.target.value as Role)} error={errors.role} hint={ROLE_DESCRIPTIONS[role]}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </SelectField>
        <FormAlert message={alert} />
        <div className="flex justify-end gap-2 pt-2">
          <Button variant="secondary" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" busy={add.isPending}>
            Add member
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
