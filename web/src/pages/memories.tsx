import { useCallback, useState, type ChangeEvent, type FormEvent } from 'react';
import { useClient, useMutation, useQuery, useSubscription } from 'urql';
import { ErrorNote, StatusNote } from '../components/status';
import { graphql } from '../gql';
import type { MemoryExportFormat, MemoryType } from '../gql/graphql';
import { download } from '../lib/download';
import { errorMessage, label, when } from '../lib/format';
import { useLatest } from '../lib/use-latest';
import { nodesOf } from '../lib/more';

const TYPES: MemoryType[] = ['EMOTION', 'FACT', 'GOAL', 'PATTERN', 'PREFERENCE', 'RELATIONSHIP'];

const MemoriesData = graphql(`
  query MemoriesPage($filter: MemoryFilter) {
    me {
      id
      memoryPaused
    }
    memoryStats {
      total
      byStatus {
        status
        count
      }
      byType {
        type
        count
      }
      memoriesExtracted
      duplicatesMerged
      duplicateRate
      turnsExamined
      creationRatePer10Turns
      replies
      repliesUsingMemories
      replyMemoryShare
    }
    memories(filter: $filter, first: 100) {
      edges {
        node {
          id
          content
          type
          status
          source
          confidence
          legacyId
          conversationId
          createdAt
          restorableUntil
        }
      }
    }
  }
`);

const MemoryChangedFeed = graphql(`
  subscription MemoryChangedFeed {
    memoryChanged {
      action
      memoryIds
    }
  }
`);

const ForgetMemory = graphql(`
  mutation ForgetMemory($id: ID!) {
    forgetMemory(id: $id) {
      id
      status
      restorableUntil
    }
  }
`);

const RestoreMemory = graphql(`
  mutation RestoreMemory($id: ID!) {
    restoreMemory(id: $id) {
      id
      status
    }
  }
`);

const PauseMemory = graphql(`
  mutation PauseMemory($paused: Boolean!) {
    updateMe(input: { memoryPaused: $paused }) {
      id
      memoryPaused
    }
  }
`);

const RememberThis = graphql(`
  mutation RememberThis($input: RememberThisInput!) {
    rememberThis(input: $input) {
      outcome
      memory {
        id
        content
        type
      }
    }
  }
`);

const ExportMemories = graphql(`
  query ExportMemories($format: MemoryExportFormat!) {
    exportMemories(format: $format) {
      data
      filename
      contentType
      count
    }
  }
`);

const ImportMemories = graphql(`
  mutation ImportMemories($json: String!) {
    importMemories(json: $json) {
      importedCount
      mergedCount
      skippedCount
    }
  }
`);

export function MemoriesPage() {
  const client = useClient();
  const [search, setSearch] = useState('');
  const [applied, setApplied] = useState('');
  const [type, setType] = useState<MemoryType | ''>('');
  const [showForgotten, setShowForgotten] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [undo, setUndo] = useState<{ id: string; content: string } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const [{ data, error }, refetch] = useQuery({
    query: MemoriesData,
    variables: {
      filter: {
        search: applied || null,
        type: type || null,
        status: showForgotten ? 'DELETED' : null,
      },
    },
  });
  const reload = useCallback(() => refetch({ requestPolicy: 'network-only' }), [refetch]);
  const latestReload = useLatest(reload);
  const onMemoryChanged = useCallback(
    (_prev: unknown, event: unknown) => {
      latestReload.current();
      return event;
    },
    [latestReload],
  );
  useSubscription({ query: MemoryChangedFeed }, onMemoryChanged);

  const [forgot, forget] = useMutation(ForgetMemory);
  const [restored, restore] = useMutation(RestoreMemory);
  const [paused, pause] = useMutation(PauseMemory);
  const [imported, importMemories] = useMutation(ImportMemories);

  async function exportAs(format: MemoryExportFormat) {
    setProblem(null);
    const result = await client
      .query(ExportMemories, { format }, { requestPolicy: 'network-only' })
      .toPromise();
    if (!result.data) {
      setProblem(result.error ? errorMessage(result.error) : 'The export failed.');
      return;
    }
    const e = result.data.exportMemories;
    download(e.data, e.filename, e.contentType);
    setNotice(`Exported ${e.count} memories as ${e.filename}.`);
  }

  async function importFile(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    setNotice(`Importing ${file.name}…`);
    const result = await importMemories({ json: await file.text() });
    if (result.data) {
      const r = result.data.importMemories;
      setNotice(
        `Imported ${r.importedCount} memories; ${r.mergedCount} you already had were merged, ${r.skippedCount} forgotten ones skipped.`,
      );
      reload();
    } else setNotice(null);
  }

  const stats = data?.memoryStats;
  return (
    <main id="main" className="page">
      <h1>Your memories</h1>
      <p className="muted">What Keepsake remembers about you, across your legacies.</p>
      <ErrorNote error={error ?? problem} />
      {notice && <StatusNote>{notice}</StatusNote>}
      {undo && (
        <p className="notice" role="status">
          Forgot “{undo.content}”.{' '}
          <button
            type="button"
            onClick={() =>
              void restore({ id: undo.id }).then((r) => {
                if (r.data) {
                  setUndo(null);
                  setNotice('Memory restored.');
                  reload();
                }
              })
            }
          >
            Undo
          </button>
        </p>
      )}
      <ErrorNote error={forgot.error ?? restored.error ?? paused.error ?? imported.error} />

      {data && (
        <section className="card" aria-labelledby="pause-heading">
          <h2 id="pause-heading">Keepsake's memory of you</h2>
          <label className="check switch">
            <input
              type="checkbox"
              role="switch"
              checked={!data.me.memoryPaused}
              onChange={(e) => void pause({ paused: !e.target.checked })}
            />
            Remember things about me: {data.me.memoryPaused ? 'paused' : 'on'}
          </label>
          <p className="muted">
            {data.me.memoryPaused
              ? 'Paused: Keepsake remembers nothing new about you and uses no memory in its replies, whatever a conversation’s switch says. “Remember this” below still works.'
              : 'On: Keepsake remembers things about you only in conversations where you turn remembering on (each conversation has its own switch, off unless you turn it on).'}
          </p>
        </section>
      )}

      {stats && (
        <section className="card" aria-labelledby="stats-heading">
          <h2 id="stats-heading">Your memories in numbers</h2>
          <dl className="stats">
            <div>
              <dt>Memories held</dt>
              <dd>{stats.total}</dd>
            </div>
            {stats.byStatus.map((s) => (
              <div key={s.status}>
                <dt>{label(s.status)}</dt>
                <dd>{s.count}</dd>
              </div>
            ))}
            {stats.byType.map((t) => (
              <div key={t.type}>
                <dt>{label(t.type)}</dt>
                <dd>{t.count}</dd>
              </div>
            ))}
            <div>
              <dt>Messages of yours Keepsake read</dt>
              <dd>{stats.turnsExamined}</dd>
            </div>
            <div>
              <dt>New memories per 10 messages</dt>
              <dd>{stats.creationRatePer10Turns.toFixed(1)}</dd>
            </div>
            <div>
              <dt>Said again, kept once</dt>
              <dd>
                {stats.duplicatesMerged} ({Math.round(stats.duplicateRate * 100)}%)
              </dd>
            </div>
            <div>
              <dt>Replies that used a memory</dt>
              <dd>
                {stats.repliesUsingMemories} of {stats.replies} (
                {Math.round(stats.replyMemoryShare * 100)}%)
              </dd>
            </div>
          </dl>
        </section>
      )}

      <RememberForm
        onSaved={(m) => {
          setNotice(m);
          reload();
        }}
      />

      <section aria-labelledby="list-heading">
        <h2 id="list-heading">Memories</h2>
        <form
          className="filters"
          role="search"
          aria-label="Filter memories"
          onSubmit={(e) => {
            e.preventDefault();
            setApplied(search.trim());
          }}
        >
          <span>
            <label htmlFor="memory-search">Search</label>
            <input
              id="memory-search"
              type="search"
              value={search}
              onChange={(e) => setSearch(e.target.value)}
            />
          </span>
          <span>
            <label htmlFor="memory-type">Type</label>
            <select
              id="memory-type"
              value={type}
              onChange={(e) => setType(e.target.value as MemoryType | '')}
            >
              <option value="">All</option>
              {TYPES.map((t) => (
                <option key={t} value={t}>
                  {label(t)}
                </option>
              ))}
            </select>
          </span>
          <label className="check">
            <input
              type="checkbox"
              checked={showForgotten}
              onChange={(e) => setShowForgotten(e.target.checked)}
            />
            Forgotten (restorable)
          </label>
          <button type="submit">Search</button>
        </form>
        {data && nodesOf(data.memories).length === 0 && <p>No memories match.</p>}
        <ul className="list" aria-label="Memories">
          {(nodesOf(data?.memories) ?? []).map((m) => (
            <li key={m.id} className="row memory">
              <span>
                {m.content} <span className="badge">{label(m.type)}</span>
                <span className="muted">
                  {' '}
                  · {label(m.source)} · {when(m.createdAt)}
                  {m.status !== 'ACTIVE' && ` · ${label(m.status)}`}
                  {m.restorableUntil && ` · restorable until ${when(m.restorableUntil)}`}
                </span>
              </span>
              {m.status === 'DELETED' ? (
                <button
                  type="button"
                  onClick={() =>
                    void restore({ id: m.id }).then((r) => {
                      if (r.data) {
                        setNotice('Memory restored.');
                        reload();
                      }
                    })
                  }
                >
                  Restore
                </button>
              ) : (
                <button
                  type="button"
                  onClick={() =>
                    void forget({ id: m.id }).then((r) => {
                      if (r.data) {
                        setUndo({ id: m.id, content: m.content });
                        reload();
                      }
                    })
                  }
                >
                  Forget<span className="sr-only"> “{m.content}”</span>
                </button>
              )}
            </li>
          ))}
        </ul>
      </section>

      <section className="card" aria-labelledby="export-heading">
        <h2 id="export-heading">Export and import</h2>
        <p className="actions">
          <button type="button" onClick={() => void exportAs('JSON')}>
            Export as JSON
          </button>
          <button type="button" onClick={() => void exportAs('CSV')}>
            Export as CSV
          </button>
        </p>
        <label htmlFor="import-memories">Import memories (a JSON export)</label>
        <input
          id="import-memories"
          type="file"
          accept="application/json,.json"
          onChange={(e) => void importFile(e)}
        />
      </section>
    </main>
  );
}

function RememberForm({ onSaved }: { onSaved: (message: string) => void }) {
  const [content, setContent] = useState('');
  const [saved, save] = useMutation(RememberThis);
  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await save({ input: { content: content.trim() } });
    if (result.data) {
      setContent('');
      const r = result.data.rememberThis;
      onSaved(
        r.outcome === 'MERGED'
          ? `Already remembered: “${r.memory.content}”.`
          : `Remembered “${r.memory.content}” (${label(r.memory.type).toLowerCase()}).`,
      );
    }
  }
  return (
    <section className="card" aria-labelledby="remember-heading">
      <h2 id="remember-heading">Remember this</h2>
      <form className="form" onSubmit={(e) => void submit(e)}>
        <label htmlFor="remember-content">What to remember, in your words</label>
        <input
          id="remember-content"
          value={content}
          onChange={(e) => setContent(e.target.value)}
          required
        />
        <ErrorNote error={saved.error} />
        <button type="submit" className="primary" disabled={saved.fetching}>
          Remember
        </button>
      </form>
    </section>
  );
}
