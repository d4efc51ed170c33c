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
import { fieldErrorsOf, messageOf } from "@/components/ui/errors";
import { controlClass, SelectField, TextField } from "@/components/ui/field";
import { Card, EmptyState, PageHeader, QueryState } from "@/components/ui/page";
import { Table, Tbody, Td, Th } from "@/components/ui/table";
import { relativeTime } from "@/components/ui/time";
import { ConfirmDialog, CopyField, FormAlert, RoleNote } from "./shared";

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
  const [resetting, setResetting] = useState<Member | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [roleErrors, setRoleErrors] = useState<Record<string, string>>({});
  const admin = org.can("admin");
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
      <Card>
        <div className="-mx-5 -my-4">
          <QueryState query={list} loading="Loading members…">
            {(rows) =>
              rows.length === 0 ? (
                <EmptyState icon={<Users className="h-8 w-8" />} title="No members" description="Add the people who work in this organization." />
              ) : (
                <Table label="Members">
                  <thead className="bg-slate-50">
                    <tr>
                      <Th>Name</Th>
                      <Th>Email</Th>
                      <Th>Role</Th>
                      <Th>Joined</Th>
                      {admin && <Th className="text-right">Actions</Th>}
                    </tr>
                  </thead>
                  <Tbody>
                    {(rows as Member[]).map((m) => {
                      const you = m.email === org.user.email;
                      return (
                        <tr key={m.id} className="align-top">
                          <Td className="font-medium text-slate-900">
                            {m.name}
                            {you && <span className="ml-2 text-xs font-normal text-slate-500">(you)</span>}
                          </Td>
                          <Td>{m.email}</Td>
                          <Td className="whitespace-normal!">
                            {admin ? (
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
                            )}
                          </Td>
                          <Td title={new Date(m.joinedAt).toLocaleString()}>{relativeTime(m.joinedAt)}</Td>
                          {admin && (
                            <Td className="text-right">
                              {!you && (
                                <Button variant="ghost" size="sm" onClick={() => setResetting(m)} aria-label={`Reset sign-in of ${m.email}`}>
                                  <KeyRound className="h-3.5 w-3.5" /> Reset sign-in
                                </Button>
                              )}
                              <Button variant="ghost" size="sm" onClick={() => setRemoving(m)} aria-label={`Remove ${m.email}`}>
                                <Trash2 className="h-3.5 w-3.5" /> Remove
                              </Button>
                            </Td>
                          )}
                        </tr>
                      );
                    })}
                  </Tbody>
                </Table>
              )
            }
          </QueryState>
        </div>
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
      <ResetSignIn member={resetting} onClose={() => setResetting(null)} onInvited={setInvited} />
      <RemoveMember member={removing} onClose={() => setRemoving(null)} />
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

function ResetSignIn({ member, onClose, onInvited }: { member: Member | null; onClose: () => void; onInvited: (i: Invited) => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const reset = useMutation(
    trpc.members.resetSignIn.mutationOptions({
      onSuccess: (r) => {
        onClose();
        onInvited({ email: r.email, title: `Sign-in reset for ${r.email}`, invitation: r.invitation });
      },
    }),
  );
  return (
    <ConfirmDialog
      open={!!member}
      title={`Reset the sign-in of ${member?.email}?`}
      description="Their password stops working and every session of theirs ends at once. You get a link to send them, with which they choose a new password; you never see or set it."
      confirmLabel="Reset sign-in"
      mutations={[reset]}
      onConfirm={() => member && reset.mutate({ org: org.slug, id: member.id })}
      onClose={onClose}
    />
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
        const fe = fieldErrorsOf(err);
        setErrors(fe);
        setAlert(Object.keys(fe).length ? null : messageOf(err));
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

function RemoveMember({ member, onClose }: { member: Member | null; onClose: () => void }) {
  const org = useOrg();
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const remove = useMutation(
    trpc.members.remove.mutationOptions({
      onSuccess: async () => {
        await queryClient.invalidateQueries({ queryKey: trpc.members.list.queryKey() });
        toast.success(`Removed ${member?.email}`);
        onClose();
      },
    }),
  );
  return (
    <ConfirmDialog
      open={!!member}
      title={`Remove ${member?.email} from ${org.slug}?`}
      description="They lose access to this organization at once, and their API tokens for it are revoked. Their account stays."
      confirmLabel="Remove member"
      mutations={[remove]}
      onConfirm={() => member && remove.mutate({ org: org.slug, id: member.id })}
      onClose={onClose}
    />
  );
}
