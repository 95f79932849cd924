import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { Link, useLocation, useParams, useSearch } from 'wouter';
import { LegacyNav } from '../components/legacy-nav';
import { ErrorNote, StatusNote } from '../components/status';
import { StoryActions } from '../components/story-actions';
import { graphql } from '../gql';
import type { StoryPageChangedSubscription, StoryReadQuery } from '../gql/graphql';
import { day, when } from '../lib/format';
import { usePollWhileIndexing } from '../lib/indexing';
import { nameOf } from '../lib/people';
import { downloadFile, useRest } from '../lib/rest';
import { useCoalesced } from '../lib/use-coalesced';
import { VisibilityBadge } from '../components/visibility';

const StoryRead = graphql(`
  query StoryRead($id: ID!, $legacyId: ID!, $page: Int!) {
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
    story(id: $id) {
      id
      title
      kind
      format
      status
      visibility
      authorId
      fileName
      pageCount
      occurredAt
      createdAt
      updatedAt
      downloadPath
      wouldDelete
      indexedChunks
      totalChunks
      failureReason
      pages(from: $page, count: 1) {
        number
        text
      }
    }
  }
`);

const StoryPageChanged = graphql(`
  subscription StoryPageChanged($legacyId: ID!) {
    storyChanged(legacyId: $legacyId) {
      change
      storyId
    }
  }
`);

const UpdateStory = graphql(`
  mutation UpdateStory($input: UpdateStoryInput!) {
    updateStory(input: $input) {
      id
      title
      occurredAt
      status
      updatedAt
    }
  }
`);

type Story = StoryReadQuery['story'];

/** `?page=7&mark=120-480`: the page to open and the passage to mark (from recall). */
function place(search: string): { page: number; mark: [number, number] | null } {
  const params = new URLSearchParams(search);
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);
  const mark = /^(\d+)-(\d+)$/.exec(params.get('mark') ?? '');
  return { page, mark: mark ? [Number(mark[1]), Number(mark[2])] : null };
}

export function StoryPage() {
  const { legacyId, storyId } = useParams<{ legacyId: string; storyId: string }>();
  const search = useSearch();
  const [, navigate] = useLocation();
  const { page, mark } = place(search);
  const [{ data, error }, refetch] = useQuery({
    query: StoryRead,
    variables: { id: storyId, legacyId, page },
  });
  const [editing, setEditing] = useState(false);
  const [status, setStatus] = useState<string | null>(null);
  // Live: a change made elsewhere (another tab, another member, a moderator) is asked again;
  // a story deleted, or no longer shared with this member, leaves the page.
  const [left, setLeft] = useState<{ id: string; change: 'DELETED' | 'REMOVED' } | null>(null);
  const gone = left?.id === storyId ? left.change : null;
  const reload = useCoalesced(() => refetch({ requestPolicy: 'network-only' }));
  const onChange = useCallback(
    (_prev: unknown, event: StoryPageChangedSubscription) => {
      const { change, storyId: changed } = event.storyChanged;
      if (changed !== storyId) return event;
      if (change === 'DELETED' || change === 'REMOVED') {
        setLeft({ id: changed, change });
        setEditing(false);
      } else {
        // Shared again, or changed: shown as it is now.
        setLeft(null);
        reload();
      }
      return event;
    },
    [storyId, reload],
  );
  useSubscription({ query: StoryPageChanged, variables: { legacyId } }, onChange);
  const story = gone ? null : data?.story;
  usePollWhileIndexing(story?.status === 'PROCESSING', reload);
  const me = data?.me.id ?? '';
  const go = (n: number) => navigate(`/legacies/${legacyId}/stories/${storyId}?page=${n}`);

  return (
    <main id="main" className="page">
      <h1>{story?.title ?? 'Story'}</h1>
      <LegacyNav legacyId={legacyId} name={data?.legacy.name} />
      <p>
        <Link href={`/legacies/${legacyId}/stories`}>All stories</Link>
      </p>
      <ErrorNote error={gone ? null : error} />
      {status && <StatusNote>{status}</StatusNote>}
      {gone && (
        <StatusNote>
          {gone === 'DELETED'
            ? 'This story was deleted.'
            : 'This story is no longer shared with you: it was made private or deleted.'}
        </StatusNote>
      )}
      {story && data && (
        <>
          <p className="meta">
            <VisibilityBadge visibility={story.visibility} />
            <span className="badge">{story.kind === 'DOCUMENT' ? story.format : 'Story'}</span>
            <span className="muted">
              by{' '}
              {story.authorId === me
                ? 'you'
                : nameOf(
                    data.legacy.members.map((m) => m.user),
                    story.authorId,
                  )}
              {story.occurredAt && ` · about ${day(story.occurredAt)}`} · added{' '}
              {when(story.createdAt)}
              {story.status === 'PROCESSING' &&
                ` · indexing ${story.indexedChunks} of ${story.totalChunks || '…'} passages`}
            </span>
          </p>
          {story.status === 'FAILED' && (
            <p className="error">
              Could not be indexed: {story.failureReason ?? 'no reason given'}.
            </p>
          )}
          <Actions
            story={story}
            legacyId={legacyId}
            me={me}
            role={data.legacy.viewerRole}
            editing={editing}
            onEdit={() => setEditing(true)}
            onDone={(message, deleted) => {
              setStatus(message);
              if (deleted) navigate(`/legacies/${legacyId}/stories`);
            }}
          />
          {editing && (
            <EditStory
              story={story}
              onClose={(saved) => {
                setEditing(false);
                if (saved) {
                  setStatus('Story saved.');
                  refetch({ requestPolicy: 'network-only' });
                }
              }}
            />
          )}
          <Reader key={page} story={story} page={page} mark={mark} onPage={go} />
        </>
      )}
    </main>
  );
}

function Actions({
  story,
  legacyId,
  me,
  role,
  editing,
  onEdit,
  onDone,
}: {
  story: Story;
  legacyId: string;
  me: string;
  role: StoryReadQuery['legacy']['viewerRole'];
  editing: boolean;
  onEdit: () => void;
  onDone: (message: string, deleted: boolean) => void;
}) {
  const api = useRest();
  const [problem, setProblem] = useState<string | null>(null);
  const name = story.fileName ?? `${story.title}.md`;
  return (
    <div className="card">
      <p className="actions">
        <button
          type="button"
          onClick={() =>
            void downloadFile(api, story.downloadPath, name).catch((e: Error) =>
              setProblem(e.message),
            )
          }
        >
          Download the original
        </button>
        {story.authorId === me && !editing && (
          <button type="button" onClick={onEdit}>
            Edit
          </button>
        )}
      </p>
      <ErrorNote error={problem} />
      <StoryActions story={story} me={me} role={role} onDone={onDone} />
      <p className="muted">
        <Link href={`/legacies/${legacyId}/recall`}>Find passages in recall</Link>
      </p>
    </div>
  );
}

function EditStory({ story, onClose }: { story: Story; onClose: (saved: boolean) => void }) {
  const [saved, save] = useMutation(UpdateStory);
  const [title, setTitle] = useState(story.title);
  const [date, setDate] = useState(story.occurredAt?.slice(0, 10) ?? '');
  // A story written in the app is one page: its text is what is edited.
  const written = story.kind === 'STORY';
  const [content, setContent] = useState(written ? (story.pages[0]?.text ?? '') : '');

  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await save({
      input: {
        id: story.id,
        title: title.trim(),
        occurredAt: date ? `${date}T12:00:00.000Z` : null,
        ...(written ? { content } : {}),
      },
    });
    if (result.data) onClose(true);
  }

  return (
    <section className="card" aria-labelledby="edit-heading">
      <h2 id="edit-heading">Edit</h2>
      <form className="form" onSubmit={(e) => void submit(e)}>
        <label htmlFor="edit-title">Title</label>
        <input id="edit-title" value={title} required onChange={(e) => setTitle(e.target.value)} />
        <label htmlFor="edit-date">When it happened</label>
        <input id="edit-date" type="date" value={date} onChange={(e) => setDate(e.target.value)} />
        {written && (
          <>
            <label htmlFor="edit-content">The story</label>
            <textarea
              id="edit-content"
              rows={10}
              value={content}
              onChange={(e) => setContent(e.target.value)}
            />
          </>
        )}
        <ErrorNote error={saved.error} />
        <p className="actions">
          <button type="submit" className="primary" disabled={saved.fetching}>
            Save
          </button>
          <button type="button" onClick={() => onClose(false)}>
            Cancel
          </button>
        </p>
      </form>
    </section>
  );
}

/** One page at a time; a passage found by recall is marked and scrolled to. */
function Reader({
  story,
  page,
  mark,
  onPage,
}: {
  story: Story;
  page: number;
  mark: [number, number] | null;
  onPage: (n: number) => void;
}) {
  const [jump, setJump] = useState(String(page));
  const marked = useRef<HTMLElement>(null);
  const text = story.pages[0]?.text ?? '';
  useEffect(() => {
    void marked.current?.scrollIntoView({ block: 'center' });
  }, [text, mark]);
  const [start, end] = mark ?? [0, 0];
  const hasMark = mark !== null && end > start && start < text.length;

  return (
    <section className="card" aria-labelledby="page-heading">
      <h2 id="page-heading">
        Page {Math.min(page, story.pageCount)} of {story.pageCount}
      </h2>
      {story.pages.length === 0 ? (
        <p>There is no page {page}.</p>
      ) : (
        <p className="pre story-text">
          {hasMark ? (
            <>
              {text.slice(0, start)}
              <mark ref={marked}>{text.slice(start, end)}</mark>
              {text.slice(end)}
            </>
          ) : (
            text
          )}
        </p>
      )}
      {story.pageCount > 1 && (
        <nav aria-label="Pages" className="actions">
          <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
            Previous page
          </button>
          <button type="button" disabled={page >= story.pageCount} onClick={() => onPage(page + 1)}>
            Next page
          </button>
          <form
            className="form inline"
            onSubmit={(e) => {
              e.preventDefault();
              const n = Number.parseInt(jump, 10);
              if (n >= 1 && n <= story.pageCount) onPage(n);
            }}
          >
            <label htmlFor="page-jump">Go to page</label>
            <input
              id="page-jump"
              type="number"
              min={1}
              max={story.pageCount}
              value={jump}
              onChange={(e) => setJump(e.target.value)}
            />
            <button type="submit">Go</button>
          </form>
        </nav>
      )}
    </section>
  );
}
