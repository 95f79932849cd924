import { useCallback, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../gql';
import type { StoryVisibility, UploadedStoryChangedSubscription } from '../gql/graphql';
import { usePollWhileIndexing } from '../lib/indexing';
import { uploadDocument, useRest } from '../lib/rest';
import { useCoalesced } from '../lib/use-coalesced';
import { ErrorNote, StatusNote } from './status';

const AddStory = graphql(`
  mutation AddStory($input: AddStoryInput!) {
    addStory(input: $input) {
      id
      title
    }
  }
`);

/** The story an upload became, followed by its id until it is indexed. */
const UploadedStory = graphql(`
  query UploadedStory($id: ID!) {
    story(id: $id) {
      id
      status
      indexedChunks
      totalChunks
      failureReason
    }
  }
`);

const UploadedStoryChanged = graphql(`
  subscription UploadedStoryChanged($legacyId: ID!) {
    storyChanged(legacyId: $legacyId) {
      change
      storyId
    }
  }
`);

/** A date input's value as the API's DateTime (noon UTC: the same day in every zone near it). */
function occurredAt(date: string): string | null {
  return date ? `${date}T12:00:00.000Z` : null;
}

function VisibilityField({
  id,
  value,
  onChange,
}: {
  id: string;
  value: StoryVisibility;
  onChange: (v: StoryVisibility) => void;
}) {
  return (
    <>
      <label htmlFor={id}>Who sees it</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as StoryVisibility)}>
        <option value="PRIVATE">Only me (private)</option>
        <option value="SHARED">The family (shared)</option>
      </select>
    </>
  );
}

/** Writing a story in the app: text or Markdown. */
export function WriteStoryForm({ legacyId, onAdded }: { legacyId: string; onAdded: () => void }) {
  const [added, add] = useMutation(AddStory);
  const [title, setTitle] = useState('');
  const [date, setDate] = useState('');
  const [content, setContent] = useState('');
  const [visibility, setVisibility] = useState<StoryVisibility>('PRIVATE');
  const [status, setStatus] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setStatus(null);
    const result = await add({
      input: { legacyId, title: title.trim(), content, visibility, occurredAt: occurredAt(date) },
    });
    if (result.data) {
      setStatus(`“${result.data.addStory.title}” saved: it is being indexed.`);
      setTitle('');
      setDate('');
      setContent('');
      onAdded();
    }
  }

  return (
    <section className="card" aria-labelledby="write-heading">
      <h2 id="write-heading">Write a story</h2>
      <form className="form" onSubmit={(e) => void submit(e)}>
        <label htmlFor="story-title">Title</label>
        <input
          id="story-title"
          value={title}
          maxLength={300}
          required
          onChange={(e) => setTitle(e.target.value)}
        />
        <label htmlFor="story-date">When it happened (optional)</label>
        <input id="story-date" type="date" value={date} onChange={(e) => setDate(e.target.value)} />
        <label htmlFor="story-content">The story (text or Markdown)</label>
        <textarea
          id="story-content"
          rows={8}
          value={content}
          required
          onChange={(e) => setContent(e.target.value)}
        />
        <VisibilityField id="story-visibility" value={visibility} onChange={setVisibility} />
        <ErrorNote error={added.error} />
        {status && <StatusNote>{status}</StatusNote>}
        <button type="submit" className="primary" disabled={added.fetching}>
          Save story
        </button>
      </form>
    </section>
  );
}

/**
 * Uploading a file (PDF, DOCX, text, Markdown): the bytes sent, then the indexing of the story
 * it became (asked by its id, whichever page of the list it is on), then a link to read it.
 */
export function UploadForm({ legacyId, onUploaded }: { legacyId: string; onUploaded: () => void }) {
  const api = useRest();
  const [file, setFile] = useState<File | null>(null);
  const [title, setTitle] = useState('');
  const [visibility, setVisibility] = useState<StoryVisibility>('PRIVATE');
  const [sent, setSent] = useState<{ done: number; total: number } | null>(null);
  const [uploaded, setUploaded] = useState<{ id: string; title: string } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!file) return;
    setProblem(null);
    setUploaded(null);
    setSent({ done: 0, total: file.size });
    const fields: Record<string, string> = { visibility };
    if (title.trim()) fields.title = title.trim();
    try {
      const story = await uploadDocument(api, legacyId, file, fields, (done, total) =>
        setSent({ done, total }),
      );
      setUploaded(story);
      onUploaded();
    } catch (err) {
      setSent(null);
      setProblem((err as Error).message);
    }
  }

  const percent = sent ? Math.round((100 * sent.done) / Math.max(sent.total, 1)) : 0;
  return (
    <section className="card" aria-labelledby="upload-heading">
      <h2 id="upload-heading">Upload a document</h2>
      <p className="muted">PDF, Word (DOCX), plain text or Markdown: letters, eulogies, recipes.</p>
      <form className="form" onSubmit={(e) => void submit(e)}>
        <label htmlFor="upload-file">File to upload</label>
        <input
          id="upload-file"
          type="file"
          accept=".pdf,.docx,.txt,.md,.markdown,application/pdf,text/plain,text/markdown,application/vnd.openxmlformats-officedocument.wordprocessingml.document"
          onChange={(e) => {
            setFile(e.target.files?.[0] ?? null);
            setSent(null);
            setUploaded(null);
            setProblem(null);
          }}
        />
        <label htmlFor="upload-title">
          Document title (optional: else the file’s own, or its name)
        </label>
        <input
          id="upload-title"
          value={title}
          maxLength={300}
          onChange={(e) => setTitle(e.target.value)}
        />
        <VisibilityField id="upload-visibility" value={visibility} onChange={setVisibility} />
        <button type="submit" className="primary" disabled={!file || (!!sent && !uploaded)}>
          Upload
        </button>
      </form>
      {sent && (
        <>
          <label htmlFor="upload-progress">Upload</label>
          <progress id="upload-progress" max={100} value={percent} />
          <StatusNote>
            {uploaded ? 'Uploaded.' : `Sending ${file?.name ?? 'the file'}: ${percent}%`}
          </StatusNote>
        </>
      )}
      {uploaded && <IndexingProgress key={uploaded.id} legacyId={legacyId} story={uploaded} />}
      <ErrorNote error={problem} />
    </section>
  );
}

/** The uploaded story's indexing: asked again on its live events, and while it is indexed. */
function IndexingProgress({
  legacyId,
  story,
}: {
  legacyId: string;
  story: { id: string; title: string };
}) {
  const [{ data, error }, refetch] = useQuery({
    query: UploadedStory,
    variables: { id: story.id },
    requestPolicy: 'network-only',
  });
  const [gone, setGone] = useState(false);
  const reload = useCoalesced(() => refetch({ requestPolicy: 'network-only' }));
  const onChange = useCallback(
    (_prev: unknown, event: UploadedStoryChangedSubscription) => {
      const { change, storyId } = event.storyChanged;
      if (storyId !== story.id) return event;
      if (change === 'DELETED' || change === 'REMOVED') setGone(true);
      else reload();
      return event;
    },
    [story.id, reload],
  );
  useSubscription({ query: UploadedStoryChanged, variables: { legacyId } }, onChange);
  const progress = gone ? null : data?.story;
  usePollWhileIndexing(progress?.status === 'PROCESSING', reload);

  if (gone) return <StatusNote>“{story.title}” was deleted.</StatusNote>;
  if (!progress) return <ErrorNote error={error} />;
  const { status, indexedChunks, totalChunks } = progress;
  return (
    <>
      <label htmlFor="indexing-progress">Indexing</label>
      <progress id="indexing-progress" max={Math.max(totalChunks, 1)} value={indexedChunks} />
      <StatusNote>
        {status === 'READY'
          ? `“${story.title}” is ready: ${totalChunks} passages, findable in recall.`
          : status === 'FAILED'
            ? `“${story.title}” could not be indexed: ${progress.failureReason ?? 'no reason given'}.`
            : totalChunks
              ? `Indexing “${story.title}”: ${indexedChunks} of ${totalChunks} passages.`
              : `Indexing “${story.title}”: splitting it into passages…`}
      </StatusNote>
      {status === 'READY' && (
        <p>
          <Link href={`/legacies/${legacyId}/stories/${story.id}`}>Read “{story.title}”</Link>
        </p>
      )}
    </>
  );
}
