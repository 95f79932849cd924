import { useCallback, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useLocation } from 'wouter';
import { ImportArchiveForm } from '../components/legacy-archive';
import { ErrorNote } from '../components/status';
import { graphql } from '../gql';
import { label, role, when } from '../lib/format';
import { nodesOf } from '../lib/more';

const HomeData = graphql(`
  query HomeData {
    me {
      id
      displayName
      email
    }
    legacies(first: 100) {
      edges {
        node {
          id
          name
          description
          bornOn
          diedOn
          viewerRole
        }
      }
    }
    myInvitations {
      id
      legacyId
      legacyName
      role
      invitedByName
      expiresAt
    }
  }
`);

const CreateLegacy = graphql(`
  mutation CreateLegacy($input: CreateLegacyInput!) {
    createLegacy(input: $input) {
      id
      name
    }
  }
`);

const AcceptInvitation = graphql(`
  mutation AcceptInvitation($id: ID!) {
    acceptInvitation(id: $id) {
      id
      name
    }
  }
`);

const UpdateMyName = graphql(`
  mutation UpdateMyName($name: String!) {
    updateMe(input: { displayName: $name }) {
      id
      displayName
    }
  }
`);

const DeclineInvitation = graphql(`
  mutation DeclineInvitation($id: ID!) {
    declineInvitation(id: $id)
  }
`);

export function HomePage() {
  const [{ data, error, fetching }, refetch] = useQuery({ query: HomeData });
  const [created, createLegacy] = useMutation(CreateLegacy);
  const [accepted, accept] = useMutation(AcceptInvitation);
  const [declined, decline] = useMutation(DeclineInvitation);
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const refreshList = useCallback(() => refetch({ requestPolicy: 'network-only' }), [refetch]);

  async function create(event: FormEvent) {
    event.preventDefault();
    const result = await createLegacy({
      input: { name: name.trim(), description: description.trim() || null },
    });
    if (result.data) navigate(`/legacies/${result.data.createLegacy.id}`);
  }

  async function answer(id: string, yes: boolean) {
    if (yes) {
      const result = await accept({ id });
      if (result.data) navigate(`/legacies/${result.data.acceptInvitation.id}`);
    } else {
      await decline({ id });
      refetch({ requestPolicy: 'network-only' });
    }
  }

  return (
    <main id="main" className="page">
      <h1>Your legacies</h1>
      {data?.me && (
        <YourName
          key={data.me.displayName ?? ''}
          displayName={data.me.displayName}
          email={data.me.email}
        />
      )}
      <ErrorNote error={error} />
      {fetching && !data && <p>Loading…</p>}

      {data && data.myInvitations.length > 0 && (
        <section aria-labelledby="invitations-heading" className="card">
          <h2 id="invitations-heading">Invitations for you</h2>
          <ul className="list">
            {data.myInvitations.map((inv) => (
              <li key={inv.id} className="row">
                <span>
                  <strong>{inv.legacyName}</strong> as {label(inv.role)}
                  {inv.invitedByName && <> from {inv.invitedByName}</>}
                  <span className="muted"> · until {when(inv.expiresAt)}</span>
                </span>
                <span className="actions">
                  <button type="button" onClick={() => void answer(inv.id, true)}>
                    Accept
                  </button>
                  <button type="button" onClick={() => void answer(inv.id, false)}>
                    Decline
                  </button>
                </span>
              </li>
            ))}
          </ul>
          <ErrorNote error={accepted.error ?? declined.error} />
        </section>
      )}

      {data && (
        <section aria-labelledby="legacies-heading">
          <h2 id="legacies-heading">Legacies</h2>
          {nodesOf(data.legacies).length === 0 ? (
            <p>You are not a member of any legacy yet: create one, or accept an invitation.</p>
          ) : (
            <ul className="cards">
              {nodesOf(data.legacies).map((legacy) => (
                <li key={legacy.id} className="card">
                  <h3>
                    <Link href={`/legacies/${legacy.id}`}>{legacy.name}</Link>
                  </h3>
                  {legacy.description && <p>{legacy.description}</p>}
                  <p className="muted">
                    {[legacy.bornOn, legacy.diedOn].filter(Boolean).join(' – ')}
                    {legacy.bornOn || legacy.diedOn ? ' · ' : ''}
                    You are {role(legacy.viewerRole)}
                  </p>
                  <p className="actions">
                    <Link href={`/legacies/${legacy.id}/facts`}>Facts</Link>
                    <Link href={`/legacies/${legacy.id}/conversations`}>Conversations</Link>
                  </p>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}

      <section aria-labelledby="create-heading" className="card">
        <h2 id="create-heading">Create a legacy</h2>
        <form onSubmit={(e) => void create(e)} className="form">
          <label htmlFor="legacy-name">Name</label>
          <input
            id="legacy-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            maxLength={200}
          />
          <label htmlFor="legacy-description">Description</label>
          <input
            id="legacy-description"
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
          <ErrorNote error={created.error} />
          <button type="submit" className="primary" disabled={created.fetching}>
            Create legacy
          </button>
        </form>
      </section>

      <ImportArchiveForm onImported={refreshList} />
    </main>
  );
}

/**
 * Who is signed in, by the name the family sees, never an id: a provider that gives no name
 * leaves the person to choose one here, and anyone may change theirs.
 */
function YourName({ displayName, email }: { displayName: string | null; email: string | null }) {
  const [editing, setEditing] = useState(displayName === null);
  const [name, setName] = useState(displayName ?? '');
  const [saved, save] = useMutation(UpdateMyName);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await save({ name: name.trim() });
    if (result.data) setEditing(false);
  }

  if (!editing && displayName) {
    return (
      <p className="muted">
        Signed in as <strong>{displayName}</strong>
        {email && <> ({email})</>}.{' '}
        <button type="button" className="link-button" onClick={() => setEditing(true)}>
          Change your name
        </button>
      </p>
    );
  }
  return (
    <form className="card form" onSubmit={(e) => void submit(e)} aria-labelledby="your-name">
      <h2 id="your-name">{displayName ? 'Your name' : 'What should your family call you?'}</h2>
      <p>
        {displayName
          ? 'The name the others see beside what you share and say.'
          : `Your sign-in did not say your name${email ? ` (only ${email})` : ''}. The others see this name beside what you share and say.`}
      </p>
      <label htmlFor="display-name">Your name</label>
      <input
        id="display-name"
        value={name}
        onChange={(e) => setName(e.target.value)}
        required
        maxLength={100}
        autoComplete="name"
      />
      <ErrorNote error={saved.error} />
      <p className="actions">
        <button type="submit" className="primary" disabled={saved.fetching}>
          Save your name
        </button>
        {displayName && (
          <button type="button" className="link-button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        )}
      </p>
    </form>
  );
}
