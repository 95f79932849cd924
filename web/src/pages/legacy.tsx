import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { useLocation, useParams } from 'wouter';
import { DownloadArchive } from '../components/legacy-archive';
import { LegacyNav } from '../components/legacy-nav';
import { ErrorNote, StatusNote } from '../components/status';
import { graphql } from '../gql';
import type { LegacyRole } from '../gql/graphql';
import { label, role as roleWithArticle, when } from '../lib/format';

const LegacyDetails = graphql(`
  query LegacyDetails($id: ID!) {
    me {
      id
    }
    legacy(id: $id) {
      id
      name
      description
      bornOn
      diedOn
      persona
      viewerRole
      members {
        role
        joinedAt
        user {
          id
          displayName
          email
        }
      }
    }
  }
`);

// Asked apart: for a plain member the field is null with a FORBIDDEN error.
const LegacyInvitations = graphql(`
  query LegacyInvitations($id: ID!) {
    legacy(id: $id) {
      id
      invitations {
        id
        email
        role
        expiresAt
      }
    }
  }
`);

const UpdateLegacy = graphql(`
  mutation UpdateLegacy($input: UpdateLegacyInput!) {
    updateLegacy(input: $input) {
      id
      name
      description
      bornOn
      diedOn
      persona
    }
  }
`);

const InviteMember = graphql(`
  mutation InviteMember($input: AddLegacyMemberInput!) {
    addLegacyMember(input: $input) {
      invitation {
        id
        email
        role
        expiresAt
      }
    }
  }
`);

const CancelInvitation = graphql(`
  mutation CancelInvitation($legacyId: ID!, $email: String!) {
    cancelLegacyInvitation(legacyId: $legacyId, email: $email)
  }
`);

const SetMemberRole = graphql(`
  mutation SetMemberRole($input: SetLegacyMemberRoleInput!) {
    setLegacyMemberRole(input: $input) {
      role
      user {
        id
      }
    }
  }
`);

const RemoveMember = graphql(`
  mutation RemoveMember($input: RemoveLegacyMemberInput!) {
    removeLegacyMember(input: $input)
  }
`);

const LeaveLegacy = graphql(`
  mutation LeaveLegacy($legacyId: ID!) {
    leaveLegacy(legacyId: $legacyId)
  }
`);

const ROLES: LegacyRole[] = ['MEMBER', 'ADMIN', 'OWNER'];

export function LegacyPage() {
  const { legacyId } = useParams<{ legacyId: string }>();
  const [{ data, error }, refetch] = useQuery({
    query: LegacyDetails,
    variables: { id: legacyId },
  });
  const legacy = data?.legacy;
  const manages = legacy?.viewerRole === 'OWNER' || legacy?.viewerRole === 'ADMIN';
  const [invitations, refetchInvitations] = useQuery({
    query: LegacyInvitations,
    variables: { id: legacyId },
    pause: !manages,
  });
  const [role, setRole] = useMutation(SetMemberRole);
  const [removed, remove] = useMutation(RemoveMember);
  const [left, leave] = useMutation(LeaveLegacy);
  const [, navigate] = useLocation();
  const [status, setStatus] = useState<string | null>(null);

  if (error) return <Frame legacyId={legacyId} error={error.message} />;
  if (!legacy || !data) return <Frame legacyId={legacyId} />;

  const refresh = () => {
    refetch({ requestPolicy: 'network-only' });
    if (manages) refetchInvitations({ requestPolicy: 'network-only' });
  };

  return (
    <main id="main" className="page">
      <h1>{legacy.name}</h1>
      <LegacyNav legacyId={legacyId} name={legacy.name} />
      {legacy.description && <p>{legacy.description}</p>}
      <p className="muted">You are {roleWithArticle(legacy.viewerRole)} of this legacy.</p>
      {status && <StatusNote>{status}</StatusNote>}

      {manages ? (
        <LegacyForm legacy={legacy} onSaved={() => setStatus('Legacy saved.')} />
      ) : (
        <section className="card" aria-labelledby="persona-heading">
          <h2 id="persona-heading">How Keepsake talks about {legacy.name}</h2>
          <p className="pre">
            {legacy.persona ??
              `Keepsake’s own way: a warm companion helping the family remember ${legacy.name}.`}
          </p>
        </section>
      )}

      <section className="card" aria-labelledby="members-heading">
        <h2 id="members-heading">Members</h2>
        <ul className="list">
          {legacy.members.map((m) => {
            const who = m.user.displayName ?? m.user.email ?? m.user.id;
            const self = m.user.id === data.me.id;
            return (
              <li key={m.user.id} className="row">
                <span>
                  <strong>{who}</strong>
                  {self && ' (you)'}
                  <span className="muted"> · joined {when(m.joinedAt)}</span>
                </span>
                {manages && !self ? (
                  <span className="actions">
                    <label className="sr-only" htmlFor={`role-${m.user.id}`}>
                      Role of {who}
                    </label>
                    <select
                      id={`role-${m.user.id}`}
                      value={m.role}
                      onChange={(e) =>
                        void setRole({
                          input: {
                            legacyId,
                            userId: m.user.id,
                            role: e.target.value as LegacyRole,
                          },
                        }).then(
                          (r) =>
                            r.data &&
                            setStatus(
                              `${who} is now ${roleWithArticle(r.data.setLegacyMemberRole.role)}.`,
                            ),
                        )
                      }
                    >
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {label(r)}
                        </option>
                      ))}
                    </select>
                    <button
                      type="button"
                      onClick={() =>
                        void remove({ input: { legacyId, userId: m.user.id } }).then((r) => {
                          if (r.data) {
                            setStatus(`${who} was removed.`);
                            refresh();
                          }
                        })
                      }
                    >
                      Remove {who}
                    </button>
                  </span>
                ) : (
                  <span>{label(m.role)}</span>
                )}
              </li>
            );
          })}
        </ul>
        <ErrorNote error={role.error ?? removed.error} />
      </section>

      {manages && (
        <Invitations
          legacyId={legacyId}
          invitations={invitations.data?.legacy.invitations ?? []}
          onChanged={(message) => {
            setStatus(message);
            refetchInvitations({ requestPolicy: 'network-only' });
          }}
        />
      )}

      <DownloadArchive legacyId={legacyId} />

      <section className="card" aria-labelledby="leave-heading">
        <h2 id="leave-heading">Leave</h2>
        <p>Your conversations and facts stay yours: you can still delete them after leaving.</p>
        <button
          type="button"
          className="danger"
          onClick={() => {
            if (!confirm(`Leave ${legacy.name}?`)) return;
            void leave({ legacyId }).then((r) => r.data && navigate('/'));
          }}
        >
          Leave this legacy
        </button>
        <ErrorNote error={left.error} />
      </section>
    </main>
  );
}

function Frame({ legacyId, error }: { legacyId: string; error?: string }) {
  return (
    <main id="main" className="page">
      <h1>Legacy</h1>
      <LegacyNav legacyId={legacyId} />
      {error ? <ErrorNote error={error} /> : <p>Loading…</p>}
    </main>
  );
}

interface EditableLegacy {
  id: string;
  name: string;
  description?: string | null;
  bornOn?: string | null;
  diedOn?: string | null;
  persona?: string | null;
}

function LegacyForm({ legacy, onSaved }: { legacy: EditableLegacy; onSaved: () => void }) {
  const [fields, setFields] = useState({
    name: legacy.name,
    description: legacy.description ?? '',
    bornOn: legacy.bornOn ?? '',
    diedOn: legacy.diedOn ?? '',
    persona: legacy.persona ?? '',
  });
  useEffect(
    () =>
      setFields({
        name: legacy.name,
        description: legacy.description ?? '',
        bornOn: legacy.bornOn ?? '',
        diedOn: legacy.diedOn ?? '',
        persona: legacy.persona ?? '',
      }),
    [legacy],
  );
  const [saved, save] = useMutation(UpdateLegacy);
  const set = (key: keyof typeof fields) => (e: { target: { value: string } }) =>
    setFields({ ...fields, [key]: e.target.value });

  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await save({
      input: {
        id: legacy.id,
        name: fields.name.trim(),
        description: fields.description,
        bornOn: fields.bornOn || null,
        diedOn: fields.diedOn || null,
        // An empty persona restores the default.
        persona: fields.persona,
      },
    });
    if (result.data) onSaved();
  }

  return (
    <section className="card" aria-labelledby="edit-heading">
      <h2 id="edit-heading">Details and persona</h2>
      <form className="form" onSubmit={(e) => void submit(e)}>
        <label htmlFor="edit-name">Name</label>
        <input id="edit-name" value={fields.name} onChange={set('name')} required />
        <label htmlFor="edit-description">Description</label>
        <input id="edit-description" value={fields.description} onChange={set('description')} />
        <div className="pair">
          <span>
            <label htmlFor="edit-born">Born on</label>
            <input id="edit-born" type="date" value={fields.bornOn} onChange={set('bornOn')} />
          </span>
          <span>
            <label htmlFor="edit-died">Died on</label>
            <input id="edit-died" type="date" value={fields.diedOn} onChange={set('diedOn')} />
          </span>
        </div>
        <label htmlFor="edit-persona">How Keepsake talks about {legacy.name}</label>
        <p className="muted" id="edit-persona-help">
          What Keepsake keeps in mind in every conversation about {legacy.name}: the tone to take,
          what to call them, what to be careful with. Leave it empty for Keepsake’s own way.
        </p>
        <textarea
          id="edit-persona"
          rows={4}
          value={fields.persona}
          onChange={set('persona')}
          aria-describedby="edit-persona-help"
        />
        <ErrorNote error={saved.error} />
        <button type="submit" className="primary" disabled={saved.fetching}>
          Save
        </button>
      </form>
    </section>
  );
}

function Invitations({
  legacyId,
  invitations,
  onChanged,
}: {
  legacyId: string;
  invitations: { id: string; email: string; role: LegacyRole; expiresAt: string }[];
  onChanged: (message: string) => void;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<LegacyRole>('MEMBER');
  const [invited, invite] = useMutation(InviteMember);
  const [cancelled, cancel] = useMutation(CancelInvitation);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await invite({ input: { legacyId, email: email.trim(), role } });
    if (result.data) {
      setEmail('');
      onChanged(`Invitation sent to ${result.data.addLegacyMember.invitation.email}.`);
    }
  }

  return (
    <section className="card" aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invitations</h2>
      {invitations.length === 0 ? (
        <p>No pending invitations.</p>
      ) : (
        <ul className="list">
          {invitations.map((inv) => (
            <li key={inv.id} className="row">
              <span>
                {inv.email} as {label(inv.role).toLowerCase()}
                <span className="muted"> · until {when(inv.expiresAt)}</span>
              </span>
              <button
                type="button"
                onClick={() =>
                  void cancel({ legacyId, email: inv.email }).then(
                    (r) => r.data && onChanged(`Invitation to ${inv.email} cancelled.`),
                  )
                }
              >
                Cancel invitation to {inv.email}
              </button>
            </li>
          ))}
        </ul>
      )}
      <form className="form inline" onSubmit={(e) => void submit(e)}>
        <span>
          <label htmlFor="invite-email">Email</label>
          <input
            id="invite-email"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
          />
        </span>
        <span>
          <label htmlFor="invite-role">Role</label>
          <select
            id="invite-role"
            value={role}
            onChange={(e) => setRole(e.target.value as LegacyRole)}
          >
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {label(r)}
              </option>
            ))}
          </select>
        </span>
        <button type="submit" className="primary" disabled={invited.fetching}>
          Send invitation
        </button>
      </form>
      <ErrorNote error={invited.error ?? cancelled.error} />
    </section>
  );
}
