import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { Link } from 'wouter';
import { graphql } from '../gql';
import type { ArchiveFieldsFragment, ArchiveProgressSubscription } from '../gql/graphql';
import { stageLabel, uploadArchive } from '../lib/archives';
import { downloadFile, useRest } from '../lib/rest';
import { ErrorNote, StatusNote } from './status';

/**
 * "Download an archive" (on a legacy's page) and "Import an archive" (on the legacies page):
 * each starts a job on the service and follows it live on legacyArchiveProgress.
 */

export const ArchiveFields = graphql(`
  fragment ArchiveFields on LegacyArchive {
    id
    kind
    status
    legacyId
    stage
    done
    total
    progress
    fileName
    sizeBytes
    downloadUrl
    failureReason
    expiresAt
    counts {
      facts
      stories
      conversations
      turns
      memories
      periodSummaries
    }
  }
`);

const LatestExport = graphql(`
  query LatestExport($legacyId: ID!) {
    legacyArchives(legacyId: $legacyId, kind: EXPORT, first: 1) {
      nodes {
        ...ArchiveFields
      }
    }
  }
`);

const ExportArchive = graphql(`
  mutation ExportArchive($legacyId: ID!) {
    exportLegacyArchive(legacyId: $legacyId) {
      ...ArchiveFields
    }
  }
`);

const ImportArchive = graphql(`
  mutation ImportArchive($id: ID!) {
    importLegacyArchive(id: $id) {
      ...ArchiveFields
    }
  }
`);

const ArchiveProgress = graphql(`
  subscription ArchiveProgress($id: ID!) {
    legacyArchiveProgress(id: $id) {
      ...ArchiveFields
    }
  }
`);

type Archive = ArchiveFieldsFragment;

const RUNNING = new Set(['QUEUED', 'RUNNING']);

function megabytes(bytes: number | null | undefined): string {
  return bytes ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : '';
}

function counted(counts: Archive['counts']): string {
  const n = (key: keyof Archive['counts']) => Number(counts[key] ?? 0);
  return [
    `${n('facts')} facts`,
    `${n('stories')} stories`,
    `${n('conversations')} conversations (${n('turns')} turns)`,
    `${n('memories')} memories`,
    `${n('periodSummaries')} period summaries`,
  ].join(', ');
}

/** Follows an archive live, from the state it was given. */
function useArchive(initial: Archive | null): Archive | null {
  const [latest, setLatest] = useState<Archive | null>(initial);
  const current = latest && initial && latest.id === initial.id ? latest : initial;
  const onEvent = useCallback((_prev: unknown, event: ArchiveProgressSubscription) => {
    setLatest(event.legacyArchiveProgress);
    return event;
  }, []);
  useSubscription(
    {
      query: ArchiveProgress,
      variables: { id: current?.id ?? '' },
      pause: !current || !RUNNING.has(current.status),
    },
    onEvent,
  );
  return current;
}

function ProgressBar({ id, archive, what }: { id: string; archive: Archive; what: string }) {
  const percent = Math.round(archive.progress * 100);
  return (
    <>
      <label htmlFor={id}>{what}</label>
      <progress id={id} max={100} value={percent} />
      <StatusNote>
        {archive.status === 'QUEUED'
          ? 'Waiting to start…'
          : `${percent}%: ${stageLabel(archive.stage)}${archive.kind === 'EXPORT' ? ` (so far ${counted(archive.counts)})` : ''}`}
      </StatusNote>
    </>
  );
}

/** A legacy's page: the member's archive of what they may see of it, with its progress. */
export function DownloadArchive({ legacyId }: { legacyId: string }) {
  const api = useRest();
  const [latest] = useQuery({ query: LatestExport, variables: { legacyId } });
  const [asked, ask] = useMutation(ExportArchive);
  const [problem, setProblem] = useState<string | null>(null);
  const started = asked.data?.exportLegacyArchive ?? latest.data?.legacyArchives.nodes[0] ?? null;
  const archive = useArchive(started);
  const download = (a: Archive) =>
    downloadFile(api, a.downloadUrl!, a.fileName ?? 'keepsake.zip').catch((err: Error) =>
      setProblem(err.message),
    );

  async function start(event: FormEvent) {
    event.preventDefault();
    setProblem(null);
    await ask({ legacyId });
  }

  return (
    <section className="card" aria-labelledby="archive-heading">
      <h2 id="archive-heading">Archive</h2>
      <p>
        A ZIP of everything you may see of this legacy: its description, the facts you may see, the
        stories with their original files, your conversations, memories and summaries. It opens in
        any browser without Keepsake (index.html), and another Keepsake can import it.
      </p>
      <form onSubmit={(e) => void start(e)}>
        <button
          type="submit"
          className="primary"
          disabled={asked.fetching || (!!archive && RUNNING.has(archive.status))}
        >
          Download an archive
        </button>
      </form>
      {archive && RUNNING.has(archive.status) && (
        <ProgressBar id="archive-progress" archive={archive} what="Writing the archive" />
      )}
      {archive?.status === 'COMPLETED' && archive.downloadUrl && (
        <div className="row">
          <StatusNote>
            Your archive is ready: {megabytes(archive.sizeBytes)}, {counted(archive.counts)}.
          </StatusNote>
          <button type="button" onClick={() => void download(archive)}>
            Save {archive.fileName ?? 'the archive'}
          </button>
        </div>
      )}
      {archive?.status === 'FAILED' && (
        <ErrorNote error={`The archive could not be made: ${archive.failureReason ?? ''}`} />
      )}
      <ErrorNote error={asked.error ?? latest.error ?? problem} />
    </section>
  );
}

/** The legacies page: an archive from any Keepsake, imported as a new legacy of yours. */
export function ImportArchiveForm({ onImported }: { onImported?: () => void }) {
  const api = useRest();
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState<{ sent: number; total: number } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [imported, startImport] = useMutation(ImportArchive);
  const archive = useArchive(imported.data?.importLegacyArchive ?? null);
  const finished = archive?.status === 'COMPLETED' ? archive.id : null;
  useEffect(() => {
    // The new legacy joins the list once it is whole.
    if (finished) onImported?.();
  }, [finished, onImported]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!file) return;
    setProblem(null);
    setSent({ sent: 0, total: file.size });
    try {
      const uploaded = await uploadArchive(api, file, (s, total) => setSent({ sent: s, total }));
      await startImport({ id: uploaded.id });
    } catch (err) {
      setSent(null);
      setProblem((err as Error).message);
    }
  }

  const percent = sent ? Math.round((sent.sent / Math.max(sent.total, 1)) * 100) : 0;
  return (
    <section className="card" aria-labelledby="import-archive-heading">
      <h2 id="import-archive-heading">Import an archive</h2>
      <p>
        A legacy archive downloaded from Keepsake (a ZIP with keepsake.json) becomes a new legacy
        that you own, its conversations, stories and facts yours and searchable.
      </p>
      <form className="form" onSubmit={(e) => void submit(e)}>
        <label htmlFor="import-archive-file">Archive (ZIP)</label>
        <input
          id="import-archive-file"
          type="file"
          accept=".zip,application/zip"
          onChange={(e) => {
            setFile(e.target.files?.[0] ?? null);
            setSent(null);
            setProblem(null);
          }}
        />
        <button
          type="submit"
          className="primary"
          disabled={!file || (!!sent && !archive) || (!!archive && RUNNING.has(archive.status))}
        >
          Import an archive
        </button>
      </form>
      {sent && !archive && (
        <>
          <label htmlFor="import-upload-progress">Upload</label>
          <progress id="import-upload-progress" max={100} value={percent} />
          <StatusNote>
            {percent < 100
              ? `Sending ${file?.name ?? 'the archive'}: ${percent}%`
              : 'Checking the archive…'}
          </StatusNote>
        </>
      )}
      {archive && RUNNING.has(archive.status) && (
        <ProgressBar id="import-progress" archive={archive} what="Importing" />
      )}
      {archive?.status === 'COMPLETED' && archive.legacyId && (
        <StatusNote>
          Imported: {counted(archive.counts)}.{' '}
          <Link href={`/legacies/${archive.legacyId}`}>Open the new legacy</Link>
        </StatusNote>
      )}
      {archive?.status === 'FAILED' && (
        <ErrorNote error={`The import failed: ${archive.failureReason ?? ''}`} />
      )}
      <ErrorNote error={imported.error ?? problem} />
    </section>
  );
}
