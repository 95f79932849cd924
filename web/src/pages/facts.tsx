import { useCallback, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { Link, useParams } from 'wouter';
import { LegacyNav } from '../components/legacy-nav';
import { ErrorNote } from '../components/status';
import { graphql } from '../gql';
import type {
  FactCategory,
  FactChangedSubscription,
  FactFilter,
  FactStatus,
  FactVisibility,
  FactsPageQuery,
} from '../gql/graphql';
import { CATEGORIES } from '../lib/facts';
import { label, when } from '../lib/format';
import { useCoalesced } from '../lib/use-coalesced';
import { nodesOf } from '../lib/more';
import { VisibilityBadge, VISIBILITY_CHOICES } from '../components/visibility';

const FactsPageData = graphql(`
  query FactsPage($legacyId: ID!, $filter: FactFilter) {
    me {
      id
    }
    legacy(id: $legacyId) {
      id
      name
      viewerRole
      members {
        user {
          id
          displayName
          email
        }
      }
    }
    facts(legacyId: $legacyId, filter: $filter, first: 100) {
      edges {
        node {
          id
          content
          category
          visibility
          status
          authorId
          author {
            id
            displayName
            email
          }
          mentionCount
          createdAt
          updatedAt
        }
      }
    }
  }
`);

const FactChanged = graphql(`
  subscription FactChanged($legacyId: ID!) {
    factChanged(legacyId: $legacyId) {
      change
      factId
      actorId
      fact {
        id
        content
      }
    }
  }
`);

const AddFact = graphql(`
  mutation AddFact($input: AddFactInput!) {
    addFact(input: $input) {
      id
      content
      visibility
    }
  }
`);

const SetFactVisibility = graphql(`
  mutation SetFactVisibility($id: ID!, $visibility: FactVisibility!) {
    setFactVisibility(id: $id, visibility: $visibility) {
      id
      visibility
    }
  }
`);

const UpdateFact = graphql(`
  mutation UpdateFact($input: UpdateFactInput!) {
    updateFact(input: $input) {
      id
      content
      category
    }
  }
`);

const DeleteFact = graphql(`
  mutation DeleteFact($id: ID!) {
    deleteFact(id: $id) {
      id
      status
    }
  }
`);

const RestoreFact = graphql(`
  mutation RestoreFact($id: ID!) {
    restoreFact(id: $id) {
      id
      status
    }
  }
`);

type FactRow = FactsPageQuery['facts']['edges'][number]['node'];

export function FactsPage() {
  const { legacyId } = useParams<{ legacyId: string }>();
  const [search, setSearch] = useState('');
  const [applied, setApplied] = useState('');
  const [category, setCategory] = useState<FactCategory | ''>('');
  const [visibility, setVisibility] = useState<FactVisibility | ''>('');
  const [authorId, setAuthorId] = useState('');
  const [status, setStatus] = useState<FactStatus>('ACTIVE');
  const [asMember, setAsMember] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const filter: FactFilter = {
    search: applied || null,
    category: category || null,
    visibility: visibility || null,
    authorId: authorId || null,
    status,
    // The family's view comes from the API: an author's own shared facts as the family sees them.
    asFamily: asMember || null,
  };
  const [{ data, error, fetching, operation }, refetch] = useQuery({
    query: FactsPageData,
    variables: { legacyId, filter },
  });
  // The list is drawn as the view it was fetched for: while the other view loads, the last one
  // stays as it was rather than one view's facts under the other's labels.
  const shownAsMember = Boolean(operation?.variables.filter?.asFamily);

  // Changes arrive live (other members', and one's own again after its mutation answered):
  // the list is asked again once per burst, so filters and order hold.
  const reload = useCoalesced(() => refetch({ requestPolicy: 'network-only' }));
  const onChange = useCallback(
    (_prev: unknown, event: FactChangedSubscription) => {
      reload();
      const e = event.factChanged;
      setNotice(
        e.change === 'REMOVED'
          ? 'A fact was removed from your view.'
          : `Fact ${label(e.change).toLowerCase()}${e.fact ? `: “${e.fact.content}”` : ''}`,
      );
      return event;
    },
    [reload],
  );
  useSubscription({ query: FactChanged, variables: { legacyId } }, onChange);

  const me = data?.me.id;
  const role = data?.legacy.viewerRole;
  const moderator = (role === 'OWNER' || role === 'ADMIN') && !shownAsMember;
  const facts = nodesOf(data?.facts) ?? [];
  const filtered = Boolean(applied || category || visibility || authorId || asMember);

  return (
    <main id="main" className="page">
      <h1>Facts{data ? ` about ${data.legacy.name}` : ''}</h1>
      <LegacyNav legacyId={legacyId} name={data?.legacy.name} />
      <p className="muted">
        Your own facts, private or shared, and the facts other members shared.
        {role === 'OWNER' || role === 'ADMIN'
          ? ' As an owner or admin you can take a shared fact back to private or delete it; nobody’s private facts are shown to you.'
          : ''}
      </p>
      <div aria-live="polite" role="status" className="status">
        {notice}
      </div>

      <form
        className="filters"
        role="search"
        aria-label="Filter facts"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(search.trim());
        }}
      >
        <span>
          <label htmlFor="fact-search">Search</label>
          <input
            id="fact-search"
            type="search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
        </span>
        <span>
          <label htmlFor="fact-category">Category</label>
          <select
            id="fact-category"
            value={category}
            onChange={(e) => setCategory(e.target.value as FactCategory | '')}
          >
            <option value="">All</option>
            {CATEGORIES.map((c) => (
              <option key={c} value={c}>
                {label(c)}
              </option>
            ))}
          </select>
        </span>
        <span>
          <label htmlFor="fact-visibility">Visibility</label>
          <select
            id="fact-visibility"
            value={visibility}
            onChange={(e) => setVisibility(e.target.value as FactVisibility | '')}
          >
            <option value="">All</option>
            {VISIBILITY_CHOICES.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        </span>
        <span>
          <label htmlFor="fact-author">Author</label>
          <select id="fact-author" value={authorId} onChange={(e) => setAuthorId(e.target.value)}>
            <option value="">Anyone</option>
            {data?.legacy.members.map((m) => (
              <option key={m.user.id} value={m.user.id}>
                {m.user.id === me ? 'You' : (m.user.displayName ?? m.user.email ?? m.user.id)}
              </option>
            ))}
          </select>
        </span>
        <span>
          <label htmlFor="fact-status">Status</label>
          <select
            id="fact-status"
            value={status}
            onChange={(e) => setStatus(e.target.value as FactStatus)}
          >
            <option value="ACTIVE">Active</option>
            <option value="DELETED">Deleted</option>
            <option value="SUPERSEDED">Superseded</option>
          </select>
        </span>
        <button type="submit">Search</button>
      </form>
      {(role === 'OWNER' || role === 'ADMIN') && (
        <p>
          <label className="check">
            <input
              type="checkbox"
              checked={asMember}
              onChange={(e) => setAsMember(e.target.checked)}
            />
            Show what a plain member sees
          </label>
        </p>
      )}

      <ErrorNote error={error} />
      {fetching && !data && <p>Loading…</p>}
      {data && facts.length === 0 && (
        <p>
          {filtered
            ? 'No facts match.'
            : status === 'DELETED'
              ? 'No deleted facts.'
              : 'No facts yet: write the first one below.'}
        </p>
      )}
      <ul className="facts" aria-label="Facts">
        {facts.map((fact) => (
          <FactItem
            key={fact.id}
            fact={fact}
            legacyId={legacyId}
            mine={!shownAsMember && fact.authorId === me}
            moderator={moderator}
            onDone={(message) => {
              setNotice(message);
              reload();
            }}
          />
        ))}
      </ul>

      {!asMember && (
        <AddFactForm
          legacyId={legacyId}
          onAdded={(message) => {
            setNotice(message);
            // Asked again at once: an empty list holds no fact whose change would refresh it,
            // and waiting for the live event showed "No facts yet" beside the new fact's notice.
            refetch({ requestPolicy: 'network-only' });
          }}
        />
      )}
    </main>
  );
}

function FactItem({
  fact,
  legacyId,
  mine,
  moderator,
  onDone,
}: {
  fact: FactRow;
  legacyId: string;
  mine: boolean;
  moderator: boolean;
  onDone: (message: string) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [content, setContent] = useState(fact.content);
  const [category, setCategory] = useState<FactCategory>(fact.category);
  const [visibility, changeVisibility] = useMutation(SetFactVisibility);
  const [updated, update] = useMutation(UpdateFact);
  const [deleted, remove] = useMutation(DeleteFact);
  const [restored, restore] = useMutation(RestoreFact);
  const author = mine ? 'you' : (fact.author?.displayName ?? fact.author?.email ?? 'a member');
  const shared = fact.visibility === 'SHARED';

  async function save(event: FormEvent) {
    event.preventDefault();
    const result = await update({ input: { id: fact.id, content: content.trim(), category } });
    if (result.data) {
      setEditing(false);
      onDone('Fact saved.');
    }
  }

  return (
    <li className="fact card" data-fact-id={fact.id}>
      {editing ? (
        <form className="form" onSubmit={(e) => void save(e)}>
          <label htmlFor={`content-${fact.id}`}>Fact</label>
          <textarea
            id={`content-${fact.id}`}
            value={content}
            maxLength={500}
            onChange={(e) => setContent(e.target.value)}
          />
          <label htmlFor={`category-${fact.id}`}>Category</label>
          <select
            id={`category-${fact.id}`}
            value={category}
            onChange={(e) => setCategory(e.target.value as FactCategory)}
          >
            {CATEGORIES.map((c) => (
              <option key={c} value={c}>
                {label(c)}
              </option>
            ))}
          </select>
          <span className="actions">
            <button type="submit" className="primary">
              Save
            </button>
            <button type="button" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </span>
        </form>
      ) : (
        <p className="fact-content">{fact.content}</p>
      )}
      <p className="meta">
        <VisibilityBadge visibility={fact.visibility} />
        <span className="badge">{label(fact.category)}</span>
        {fact.status !== 'ACTIVE' && <span className="badge">{label(fact.status)}</span>}
        <span className="muted">
          by {author} · {when(fact.createdAt)}
          {fact.mentionCount > 1 ? ` · said ${fact.mentionCount} times` : ''}
        </span>
      </p>
      <p className="actions">
        <Link href={`/legacies/${legacyId}/facts/${fact.id}`}>
          History<span className="sr-only"> of “{fact.content}”</span>
        </Link>
        {fact.status === 'DELETED' && (mine || moderator) && (
          <button
            type="button"
            onClick={() =>
              void restore({ id: fact.id }).then((r) => r.data && onDone('Fact restored.'))
            }
          >
            Restore
          </button>
        )}
        {fact.status === 'ACTIVE' && mine && !editing && (
          <>
            <button
              type="button"
              onClick={() =>
                void changeVisibility({
                  id: fact.id,
                  visibility: shared ? 'PRIVATE' : 'SHARED',
                }).then((r) => r.data && onDone(shared ? 'Fact unshared.' : 'Fact shared.'))
              }
            >
              {shared ? 'Unshare' : 'Share'}
            </button>
            <button
              type="button"
              onClick={() => {
                // The fact as it is now: another member may have edited it since this rendered.
                setContent(fact.content);
                setCategory(fact.category);
                setEditing(true);
              }}
            >
              Edit
            </button>
          </>
        )}
        {fact.status === 'ACTIVE' && !mine && moderator && shared && (
          <button
            type="button"
            onClick={() =>
              void changeVisibility({ id: fact.id, visibility: 'PRIVATE' }).then(
                (r) => r.data && onDone('Fact made private: only its author sees it now.'),
              )
            }
          >
            Make private
          </button>
        )}
        {fact.status === 'ACTIVE' && !editing && (mine || (moderator && shared)) && (
          <button
            type="button"
            className="danger"
            onClick={() =>
              void remove({ id: fact.id }).then(
                (r) => r.data && onDone('Fact deleted: restore it from the Deleted filter.'),
              )
            }
          >
            Delete
          </button>
        )}
      </p>
      <ErrorNote error={visibility.error ?? updated.error ?? deleted.error ?? restored.error} />
    </li>
  );
}

function AddFactForm({ legacyId, onAdded }: { legacyId: string; onAdded: (m: string) => void }) {
  const [content, setContent] = useState('');
  const [category, setCategory] = useState<FactCategory>('OTHER');
  const [share, setShare] = useState(false);
  const [added, add] = useMutation(AddFact);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await add({
      input: {
        legacyId,
        content: content.trim(),
        category,
        visibility: share ? 'SHARED' : 'PRIVATE',
      },
    });
    if (result.data) {
      setContent('');
      const added = result.data.addFact.content;
      onAdded(
        share
          ? `Added and shared with the family: “${added}”`
          : `Added, only you see it until you share it: “${added}”`,
      );
    }
  }

  return (
    <section className="card" aria-labelledby="add-fact-heading">
      <h2 id="add-fact-heading">Write a fact</h2>
      <form className="form" onSubmit={(e) => void submit(e)}>
        <label htmlFor="new-fact">One sentence about the legacy</label>
        <textarea
          id="new-fact"
          value={content}
          maxLength={500}
          required
          onChange={(e) => setContent(e.target.value)}
        />
        <label htmlFor="new-fact-category">Category</label>
        <select
          id="new-fact-category"
          value={category}
          onChange={(e) => setCategory(e.target.value as FactCategory)}
        >
          {CATEGORIES.map((c) => (
            <option key={c} value={c}>
              {label(c)}
            </option>
          ))}
        </select>
        <label className="check">
          <input type="checkbox" checked={share} onChange={(e) => setShare(e.target.checked)} />
          Share with the family now
        </label>
        <ErrorNote error={added.error} />
        <button type="submit" className="primary" disabled={added.fetching}>
          Add fact
        </button>
      </form>
    </section>
  );
}
