import { useCallback, useMemo, useState, type FormEvent } from 'react';
import { useQuery, useSubscription } from 'urql';
import { Link, useParams } from 'wouter';
import { LegacyNav } from '../components/legacy-nav';
import { ErrorNote, StatusNote } from '../components/status';
import { StoryActions } from '../components/story-actions';
import { ShowMore } from '../components/show-more';
import { UploadForm, WriteStoryForm } from '../components/story-forms';
import { graphql } from '../gql';
import type {
  StoriesPageQuery,
  StoryFilter,
  StoryKind,
  StoryStatus,
  StoryVisibility,
} from '../gql/graphql';
import { day, label, when } from '../lib/format';
import { usePollWhileIndexing } from '../lib/indexing';
import { useMore } from '../lib/more';
import { nameOf } from '../lib/people';
import { useCoalesced } from '../lib/use-coalesced';
import { VisibilityBadge, VISIBILITY_CHOICES } from '../components/visibility';

const StoriesPage_ = graphql(`
  query StoriesPage($legacyId: ID!, $filter: StoryFilter, $after: String) {
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
    stories(legacyId: $legacyId, filter: $filter, first: 50, after: $after) {
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          title
          kind
          format
          status
          visibility
          authorId
          fileName
          pageCount
          sizeBytes
          indexedChunks
          totalChunks
          failureReason
          occurredAt
          createdAt
          wouldDelete
        }
      }
    }
  }
`);

const StoryChanged = graphql(`
  subscription StoryChanged($legacyId: ID!) {
    storyChanged(legacyId: $legacyId) {
      change
      storyId
    }
  }
`);

type Row = StoriesPageQuery['stories']['edges'][number]['node'];

const selectStories = (data: StoriesPageQuery) => data.stories;

export function StoriesPage() {
  const { legacyId } = useParams<{ legacyId: string }>();
  const [filter, setFilter] = useState<StoryFilter>({});
  const [search, setSearch] = useState('');
  const variables = useMemo(() => ({ legacyId, filter }), [legacyId, filter]);
  const [{ data, error }, refetch] = useQuery({ query: StoriesPage_, variables });
  const [status, setStatus] = useState<string | null>(null);
  const reload = useCoalesced(() => refetch({ requestPolicy: 'network-only' }));
  const onChange = useCallback(
    (_prev: unknown, event: unknown) => {
      reload();
      return event;
    },
    [reload],
  );
  useSubscription({ query: StoryChanged, variables: { legacyId } }, onChange);

  const list = useMore(StoriesPage_, variables, selectStories, data?.stories);
  const stories = list.nodes;
  usePollWhileIndexing(
    stories.some((s) => s.status === 'PROCESSING'),
    reload,
  );

  const me = data?.me.id ?? '';
  const people = data?.legacy.members.map((m) => m.user) ?? [];
  const set = <K extends keyof StoryFilter>(key: K, value: StoryFilter[K] | '') =>
    setFilter((f) => ({ ...f, [key]: value || null }));

  function submitSearch(event: FormEvent) {
    event.preventDefault();
    set('search', search.trim());
  }

  return (
    <main id="main" className="page">
      <h1>Stories and documents{data ? ` about ${data.legacy.name}` : ''}</h1>
      <LegacyNav legacyId={legacyId} name={data?.legacy.name} />
      <p className="muted">
        Your own stories, private until you share them, and those other members shared.
      </p>
      <ErrorNote error={error} />
      {status && <StatusNote>{status}</StatusNote>}

      <form className="filters" role="search" aria-label="Stories" onSubmit={submitSearch}>
        <span className="grow">
          <label htmlFor="story-search">Search</label>
          <input id="story-search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </span>
        <button type="submit">Search</button>
        <span>
          <label htmlFor="story-kind">Kind</label>
          <select
            id="story-kind"
            value={filter.kind ?? ''}
            onChange={(e) => set('kind', e.target.value as StoryKind)}
          >
            <option value="">Any</option>
            <option value="STORY">Written here</option>
            <option value="DOCUMENT">Uploaded files</option>
          </select>
        </span>
        <span>
          <label htmlFor="story-visibility-filter">Visibility</label>
          <select
            id="story-visibility-filter"
            value={filter.visibility ?? ''}
            onChange={(e) => set('visibility', e.target.value as StoryVisibility)}
          >
            <option value="">Any</option>
            {VISIBILITY_CHOICES.map((c) => (
              <option key={c.value} value={c.value}>
                {c.label}
              </option>
            ))}
          </select>
        </span>
        <span>
          <label htmlFor="story-status">Status</label>
          <select
            id="story-status"
            value={filter.status ?? ''}
            onChange={(e) => set('status', e.target.value as StoryStatus)}
          >
            <option value="">Any</option>
            <option value="READY">Ready</option>
            <option value="PROCESSING">Being indexed</option>
            <option value="FAILED">Failed</option>
          </select>
        </span>
      </form>

      <section aria-labelledby="stories-heading">
        <h2 id="stories-heading">Stories</h2>
        {data && stories.length === 0 && <p>No stories match.</p>}
        <ul className="list" aria-label="Stories">
          {stories.map((story) => (
            <StoryItem
              key={story.id}
              story={story}
              legacyId={legacyId}
              author={nameOf(people, story.authorId, me)}
              actions={
                data && (
                  <StoryActions
                    story={story}
                    me={me}
                    role={data.legacy.viewerRole}
                    onDone={(message) => {
                      setStatus(message);
                      reload();
                    }}
                  />
                )
              }
            />
          ))}
        </ul>
        <ShowMore list={list} what="stories" />
      </section>

      <div className="cards">
        <WriteStoryForm legacyId={legacyId} onAdded={reload} />
        <UploadForm legacyId={legacyId} onUploaded={reload} />
      </div>
    </main>
  );
}

function StoryItem({
  story,
  legacyId,
  author,
  actions,
}: {
  story: Row;
  legacyId: string;
  author: string;
  actions: React.ReactNode;
}) {
  const kind = story.kind === 'DOCUMENT' ? `${story.format} file` : 'Story';
  return (
    <li>
      <p className="fact-content">
        <Link href={`/legacies/${legacyId}/stories/${story.id}`}>{story.title}</Link>
      </p>
      <p className="meta">
        <VisibilityBadge visibility={story.visibility} />
        <span className="badge">{kind}</span>
        {story.status !== 'READY' && <span className="badge">{label(story.status)}</span>}
        <span className="muted">
          by {author === 'You' ? 'you' : author}
          {story.occurredAt && ` · about ${day(story.occurredAt)}`} · {story.pageCount} page
          {story.pageCount === 1 ? '' : 's'}
          {story.fileName && ` · ${story.fileName}`} · added {when(story.createdAt)}
        </span>
      </p>
      {story.status === 'PROCESSING' && (
        <p className="muted">
          Indexing: {story.indexedChunks} of {story.totalChunks || '…'} passages
        </p>
      )}
      {story.status === 'FAILED' && (
        <p className="error">Could not be indexed: {story.failureReason ?? 'no reason given'}.</p>
      )}
      {actions}
    </li>
  );
}
