import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, type CombinedError } from 'urql';
import { ErrorNote, StatusNote } from '../components/status';
import { graphql } from '../gql';
import type { ProfileFieldsFragment } from '../gql/graphql';
import { when } from '../lib/format';
import { nodesOf } from '../lib/more';

export const ProfileFields = graphql(`
  fragment ProfileFields on Profile {
    consent
    consentChangedAt
    updatedAt
    preferredName
    pronouns
    birthday
    homeTown
    languages
    interests
    conversationGoals
    notes
    relationships {
      legacyId
      legacyName
      relationship
    }
  }
`);

const ProfileQuery = graphql(`
  query Profile {
    profile {
      ...ProfileFields
    }
    legacies(first: 50) {
      edges {
        node {
          id
          name
        }
      }
    }
  }
`);

const UpdateProfile = graphql(`
  mutation UpdateProfile($input: UpdateProfileInput!) {
    updateProfile(input: $input) {
      ...ProfileFields
    }
  }
`);

const SetConsent = graphql(`
  mutation SetProfileConsent($consent: Boolean!) {
    setProfileConsent(consent: $consent) {
      ...ProfileFields
    }
  }
`);

type Profile = ProfileFieldsFragment;
type TextField =
  'preferredName' | 'pronouns' | 'birthday' | 'homeTown' | 'conversationGoals' | 'notes';

const TEXT_FIELDS: { field: TextField; label: string; hint?: string; long?: boolean }[] = [
  { field: 'preferredName', label: 'Preferred name' },
  { field: 'pronouns', label: 'Pronouns', hint: 'Such as she/her.' },
  { field: 'birthday', label: 'Birthday' },
  { field: 'homeTown', label: 'Home town' },
  {
    field: 'conversationGoals',
    label: 'What you want from the conversations',
    long: true,
  },
  { field: 'notes', label: 'Anything else about you', long: true },
];

const LIST_FIELDS = [
  { field: 'languages', label: 'Languages', hint: 'Separated by commas: English, Irish.' },
  { field: 'interests', label: 'Interests', hint: 'Separated by commas: gardening, jazz.' },
] as const;

/** The names of what a profile holds, for "what goes" when consent is withdrawn. */
function filledIn(profile: Profile): string[] {
  const names = [
    ...TEXT_FIELDS.filter((f) => profile[f.field]).map((f) => f.label.toLowerCase()),
    ...LIST_FIELDS.filter((f) => profile[f.field].length).map((f) => f.label.toLowerCase()),
  ];
  for (const r of profile.relationships) names.push(`your relationship to ${r.legacyName}`);
  return names;
}

/** The field a BAD_USER_INPUT names (`birthday`, `relationships.0.relationship`, ...). */
function badField(error: CombinedError | undefined): string | null {
  const field = error?.graphQLErrors[0]?.extensions?.field;
  return typeof field === 'string' ? field : null;
}

export function ProfilePage() {
  const [{ data, error }] = useQuery({ query: ProfileQuery });
  const profile = data?.profile;
  return (
    <main id="main" className="page narrow">
      <h1>Your profile</h1>
      <p className="muted">
        What you tell Keepsake about yourself. It is yours alone: no other member, owner or admin of
        a legacy, and no platform administrator, reads any of it.
      </p>
      <ErrorNote error={error} />
      {profile && data && (
        <>
          <Consent profile={profile} />
          <ProfileForm
            // A new form when consent changes: withdrawing it empties the profile.
            key={profile.consentChangedAt ?? ''}
            profile={profile}
            legacies={nodesOf(data.legacies)}
          />
        </>
      )}
    </main>
  );
}

function Consent({ profile }: { profile: Profile }) {
  const [changed, setConsent] = useMutation(SetConsent);
  const [confirming, setConfirming] = useState(false);
  const [status, setStatus] = useState<string | null>(null);
  const goes = filledIn(profile);

  async function turn(consent: boolean) {
    const result = await setConsent({ consent });
    setConfirming(false);
    if (result.data)
      setStatus(
        consent
          ? 'Consent given: your profile is used in your conversations and recall.'
          : 'Consent withdrawn: your profile was deleted.',
      );
  }

  return (
    <section className="card" aria-labelledby="consent-heading">
      <h2 id="consent-heading">Consent</h2>
      <ul>
        <li>
          <strong>Off</strong> (as it starts): Keepsake keeps what you write below, and never uses
          it. Nothing of it goes to any model, nor into a conversation or recall.
        </li>
        <li>
          <strong>On</strong>: the agent may use it when you talk with it, and recall may find it.
          Each entry is sent to the embedding model to make it findable. A reply written while it
          was on stays in its conversation.
        </li>
        <li>
          <strong>Turning it off</strong> deletes the whole profile at once, for good: there is no
          undo.
        </li>
      </ul>
      <label className="check switch">
        <input
          type="checkbox"
          role="switch"
          checked={profile.consent}
          disabled={changed.fetching}
          onChange={(e) => {
            setStatus(null);
            if (e.target.checked) void turn(true);
            else setConfirming(true);
          }}
        />
        Use my profile in my conversations and recall ({profile.consent ? 'on' : 'off'})
      </label>
      {profile.consentChangedAt && (
        <p className="muted">Changed {when(profile.consentChangedAt)}.</p>
      )}
      {confirming && (
        <div className="notice" role="alertdialog" aria-labelledby="withdraw-heading">
          <h3 id="withdraw-heading">Withdraw consent and delete your profile?</h3>
          {goes.length ? (
            <p>
              This deletes, now and for good: {goes.join(', ')}, and what was made to find them.
            </p>
          ) : (
            <p>Your profile is empty: nothing else goes.</p>
          )}
          <p className="actions">
            <button type="button" className="danger" onClick={() => void turn(false)}>
              Withdraw and delete
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </p>
        </div>
      )}
      {status && <StatusNote>{status}</StatusNote>}
      <ErrorNote error={changed.error} />
    </section>
  );
}

function ProfileForm({
  profile,
  legacies,
}: {
  profile: Profile;
  legacies: readonly { id: string; name: string }[];
}) {
  const [saved, save] = useMutation(UpdateProfile);
  const [status, setStatus] = useState<string | null>(null);
  const [text, setText] = useState(() =>
    Object.fromEntries(TEXT_FIELDS.map((f) => [f.field, profile[f.field] ?? ''])),
  );
  const [lists, setLists] = useState(() =>
    Object.fromEntries(LIST_FIELDS.map((f) => [f.field, profile[f.field].join(', ')])),
  );
  const [relations, setRelations] = useState(() =>
    Object.fromEntries(
      legacies.map((l) => [
        l.id,
        profile.relationships.find((r) => r.legacyId === l.id)?.relationship ?? '',
      ]),
    ),
  );
  const invalid = badField(saved.error);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setStatus(null);
    const split = (value: string) =>
      value
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean);
    const result = await save({
      input: {
        ...Object.fromEntries(TEXT_FIELDS.map((f) => [f.field, text[f.field].trim() || null])),
        languages: split(lists.languages),
        interests: split(lists.interests),
        relationships: legacies.map((l) => ({
          legacyId: l.id,
          relationship: relations[l.id].trim() || null,
        })),
      },
    });
    if (result.data) setStatus('Profile saved.');
  }

  return (
    <section className="card" aria-labelledby="fields-heading">
      <h2 id="fields-heading">About you</h2>
      <p className="muted">
        {profile.consent
          ? 'Used in your conversations and recall while consent is on.'
          : 'Kept, and not used, while consent is off.'}{' '}
        Leave a field blank to clear it.
      </p>
      <form className="form" onSubmit={(e) => void submit(e)}>
        {TEXT_FIELDS.map((f) => {
          const props = {
            id: `profile-${f.field}`,
            value: text[f.field],
            'aria-invalid': invalid === f.field || undefined,
            'aria-describedby': f.hint ? `profile-${f.field}-hint` : undefined,
          };
          const change = (value: string) => setText((t) => ({ ...t, [f.field]: value }));
          return (
            <div key={f.field} className="field">
              <label htmlFor={props.id}>{f.label}</label>
              {f.long ? (
                <textarea {...props} rows={3} onChange={(e) => change(e.target.value)} />
              ) : (
                <input
                  {...props}
                  type={f.field === 'birthday' ? 'date' : 'text'}
                  onChange={(e) => change(e.target.value)}
                />
              )}
              {f.hint && (
                <span id={`profile-${f.field}-hint`} className="muted">
                  {f.hint}
                </span>
              )}
            </div>
          );
        })}
        {LIST_FIELDS.map((f) => (
          <div key={f.field} className="field">
            <label htmlFor={`profile-${f.field}`}>{f.label}</label>
            <input
              id={`profile-${f.field}`}
              value={lists[f.field]}
              aria-invalid={invalid?.startsWith(f.field) || undefined}
              aria-describedby={`profile-${f.field}-hint`}
              onChange={(e) => setLists((l) => ({ ...l, [f.field]: e.target.value }))}
            />
            <span id={`profile-${f.field}-hint`} className="muted">
              {f.hint}
            </span>
          </div>
        ))}
        {legacies.length > 0 && (
          <fieldset className="choices">
            <legend>Your relationship to each legacy (used only in its own conversations)</legend>
            {legacies.map((l) => (
              <div key={l.id} className="field">
                <label htmlFor={`relationship-${l.id}`}>To {l.name}</label>
                <input
                  id={`relationship-${l.id}`}
                  value={relations[l.id]}
                  placeholder="granddaughter, neighbour for 30 years…"
                  onChange={(e) => setRelations((r) => ({ ...r, [l.id]: e.target.value }))}
                />
              </div>
            ))}
          </fieldset>
        )}
        <ErrorNote error={saved.error} />
        {status && <StatusNote>{status}</StatusNote>}
        <button type="submit" className="primary" disabled={saved.fetching}>
          Save profile
        </button>
      </form>
    </section>
  );
}
