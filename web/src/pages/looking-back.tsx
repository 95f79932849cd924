import { useCallback, useEffect, useMemo, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { Link, useParams } from 'wouter';
import { CompareYears } from '../components/compare-years';
import { LegacyNav } from '../components/legacy-nav';
import { ShowMore } from '../components/show-more';
import { ErrorNote, StatusNote } from '../components/status';
import { graphql } from '../gql';
import type { LookingBackQuery, SummaryPeriod } from '../gql/graphql';
import { label, when } from '../lib/format';
import { useMore } from '../lib/more';
import { calendarDay, periodName, today } from '../lib/periods';
import { useCoalesced } from '../lib/use-coalesced';

const LookingBack = graphql(`
  query LookingBack($legacyId: ID!, $period: SummaryPeriod, $after: String) {
    legacy(id: $legacyId) {
      id
      name
    }
    periodSummaries(legacyId: $legacyId, period: $period, first: 50, after: $after) {
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          period
          start
          end
          timeZone
          summary
          emotionalTone
          keyThemes
          recurringPatterns
          people
          places
          conversationCount
          turnCount
          conversationIds
          sourceChunkIds
          sourcePeriodIds
          aggregated
          stale
          model
          promptVersion
          updatedAt
        }
      }
    }
  }
`);

const SummaryAdded = graphql(`
  subscription PeriodSummaryAdded($legacyId: ID!) {
    periodSummaryAdded(legacyId: $legacyId) {
      id
    }
  }
`);

const Backfill = graphql(`
  mutation BackfillPeriodSummaries($input: BackfillPeriodSummariesInput!) {
    backfillPeriodSummaries(input: $input) {
      id
    }
  }
`);

const Progress = graphql(`
  query PeriodSummaryProgress($id: ID!) {
    periodSummaryProgress(id: $id) {
      id
      from
      to
      total
      stored
      empty
      skipped
      pending
      done
    }
  }
`);

const DeleteSummary = graphql(`
  mutation DeletePeriodSummary($id: ID!) {
    deletePeriodSummary(id: $id)
  }
`);

type Summary = LookingBackQuery['periodSummaries']['edges'][number]['node'];

const selectSummaries = (data: LookingBackQuery) => data.periodSummaries;

export function LookingBackPage() {
  const { legacyId } = useParams<{ legacyId: string }>();
  const [period, setPeriod] = useState<SummaryPeriod | null>(null);
  const variables = useMemo(() => ({ legacyId, period }), [legacyId, period]);
  const [{ data, error }, refetch] = useQuery({ query: LookingBack, variables });
  const reload = useCoalesced(() => refetch({ requestPolicy: 'network-only' }));
  const onAdded = useCallback(
    (_prev: unknown, event: unknown) => {
      reload();
      return event;
    },
    [reload],
  );
  useSubscription({ query: SummaryAdded, variables: { legacyId } }, onAdded);
  const [status, setStatus] = useState<string | null>(null);
  const list = useMore(LookingBack, variables, selectSummaries, data?.periodSummaries);
  const summaries = list.nodes;

  return (
    <main id="main" className="page">
      <h1>Looking back{data ? ` with ${data.legacy.name}` : ''}</h1>
      <LegacyNav legacyId={legacyId} name={data?.legacy.name} />
      <p className="muted">
        Your weeks, months and years of conversations, summarized. They are yours alone, like the
        conversations they come from.
      </p>
      <ErrorNote error={error} />
      <BackfillForm legacyId={legacyId} onDone={reload} />
      <CompareYears legacyId={legacyId} />

      <section aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Timeline</h2>
        <div className="filters">
          <span>
            <label htmlFor="period-filter">Show</label>
            <select
              id="period-filter"
              value={period ?? ''}
              onChange={(e) => setPeriod((e.target.value || null) as SummaryPeriod | null)}
            >
              <option value="">Weeks, months and years</option>
              <option value="WEEK">Weeks</option>
              <option value="MONTH">Months</option>
              <option value="YEAR">Years</option>
            </select>
          </span>
        </div>
        {status && <StatusNote>{status}</StatusNote>}
        {data && summaries.length === 0 && (
          <p>No summaries yet: they come a day after each week ends, or backfill a range above.</p>
        )}
        <ol className="timeline" aria-label="Summaries">
          {summaries.map((s) => (
            <SummaryItem
              key={s.id}
              summary={s}
              legacyId={legacyId}
              all={summaries}
              onDeleted={() => {
                setStatus(`${periodName(s.period, s.start)} deleted.`);
                reload();
              }}
            />
          ))}
        </ol>
        <ShowMore list={list} what="summaries" />
      </section>
    </main>
  );
}

function BackfillForm({ legacyId, onDone }: { legacyId: string; onDone: () => void }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState(today());
  const [started, backfill] = useMutation(Backfill);
  const [progressId, setProgressId] = useState<string | null>(null);
  const [{ data }, poll] = useQuery({
    query: Progress,
    variables: { id: progressId ?? '' },
    pause: !progressId,
    requestPolicy: 'network-only',
  });
  const progress = data?.periodSummaryProgress;
  const done = progress?.done ?? false;
  useEffect(() => {
    if (!progressId || done) return;
    const timer = setInterval(() => poll({ requestPolicy: 'network-only' }), 1000);
    return () => clearInterval(timer);
  }, [progressId, done, poll]);
  useEffect(() => {
    if (done) onDone();
  }, [done, onDone]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await backfill({ input: { legacyId, from, to } });
    if (result.data) setProgressId(result.data.backfillPeriodSummaries.id);
  }

  const finished = progress ? progress.stored + progress.empty + progress.skipped : 0;
  return (
    <section className="card" aria-labelledby="backfill-heading">
      <h2 id="backfill-heading">Summarize a past range</h2>
      <form className="form inline" onSubmit={(e) => void submit(e)}>
        <span>
          <label htmlFor="backfill-from">From</label>
          <input
            id="backfill-from"
            type="date"
            value={from}
            required
            onChange={(e) => setFrom(e.target.value)}
          />
        </span>
        <span>
          <label htmlFor="backfill-to">To</label>
          <input
            id="backfill-to"
            type="date"
            value={to}
            required
            onChange={(e) => setTo(e.target.value)}
          />
        </span>
        <button type="submit" className="primary" disabled={started.fetching}>
          Summarize the range
        </button>
      </form>
      <p className="muted">
        Every week, month and year of the range that has ended, from your own conversations. One
        already up to date is not summarized again.
      </p>
      <ErrorNote error={started.error} />
      {progress && (
        <>
          <label htmlFor="backfill-progress">Summarizing</label>
          <progress id="backfill-progress" max={Math.max(progress.total, 1)} value={finished} />
          <StatusNote>
            {progress.done ? 'Done: ' : 'Working: '}
            {finished} of {progress.total} periods ({progress.stored} summarized, {progress.empty}{' '}
            with no conversation, {progress.skipped} left alone)
            {progress.pending ? `, ${progress.pending} to go.` : '.'}
          </StatusNote>
        </>
      )}
    </section>
  );
}

function SummaryItem({
  summary: s,
  legacyId,
  all,
  onDeleted,
}: {
  summary: Summary;
  legacyId: string;
  all: readonly Summary[];
  onDeleted: () => void;
}) {
  const [deleted, deleteSummary] = useMutation(DeleteSummary);
  const [confirming, setConfirming] = useState(false);
  const name = periodName(s.period, s.start);
  const chunks = s.sourceChunkIds.length;
  const builtFrom =
    s.period !== 'WEEK'
      ? s.sourcePeriodIds
          .map((id) => all.find((o) => o.id === id))
          .map((o) => (o ? periodName(o.period, o.start) : 'a period not shown'))
          .join(', ') || 'nothing stored'
      : chunks
        ? `${chunks} conversation summar${chunks === 1 ? 'y' : 'ies'}, and the turns none covers yet`
        : 'The turns of its conversations (none summarized yet)';

  async function remove() {
    const result = await deleteSummary({ id: s.id });
    setConfirming(false);
    if (result.data) onDeleted();
  }

  return (
    <li>
      <h3>{name}</h3>
      <p className="meta">
        <span className="badge">{label(s.period)}</span>
        {s.aggregated && (
          <span className="badge" title="Keepsake has no language model set up">
            Put together without a language model
          </span>
        )}
        {s.stale && <span className="badge">Being rebuilt</span>}
        <span className="muted">
          {calendarDay(s.start)} – {calendarDay(s.end)} · {s.conversationCount} conversation
          {s.conversationCount === 1 ? '' : 's'}, {s.turnCount} message
          {s.turnCount === 1 ? '' : 's'}
        </span>
      </p>
      {s.aggregated && (
        <p className="muted">
          Without a language model, Keepsake puts this together from what was said: the sentences
          that say most about the period, and the names and words that came up most. It reads less
          well than a written summary.
        </p>
      )}
      <p className="pre">{s.summary}</p>
      <dl className="pairs">
        {s.emotionalTone && <Pair term="How it felt" value={s.emotionalTone} />}
        <Pair term="What came up" value={s.keyThemes.join(', ')} />
        <Pair term="Came up again and again" value={s.recurringPatterns.join(', ')} />
        <Pair term="People" value={s.people.join(', ')} />
        <Pair term="Places" value={s.places.join(', ')} />
      </dl>
      {s.conversationIds.length > 0 && (
        <p className="muted">
          From{' '}
          {s.conversationIds.map((id, i) => (
            <span key={id}>
              {i > 0 && ', '}
              <Link href={`/legacies/${legacyId}/conversations/${id}`}>conversation {i + 1}</Link>
            </span>
          ))}
        </p>
      )}
      <details className="technical">
        <summary>How it was made</summary>
        <dl className="pairs">
          <Pair term="Built from" value={builtFrom} />
          <Pair term="Time zone" value={s.timeZone} />
          <Pair
            term="Made by"
            value={`${s.model}${s.promptVersion ? ` (${s.promptVersion})` : ''}, ${when(s.updatedAt)}`}
          />
        </dl>
      </details>
      <button type="button" className="danger" onClick={() => setConfirming(true)}>
        Delete<span className="sr-only"> the summary of {name}</span>
      </button>
      {confirming && (
        <div className="notice" role="alertdialog" aria-label={`Delete the summary of ${name}?`}>
          <p>
            This deletes the summary of {name} now: its text, themes, names, what it was built from
            and its vector. It is not made again unless you ask for it.
          </p>
          <p className="actions">
            <button type="button" className="danger" onClick={() => void remove()}>
              Delete the summary
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </p>
        </div>
      )}
      <ErrorNote error={deleted.error} />
    </li>
  );
}

function Pair({ term, value }: { term: string; value: string }) {
  if (!value) return null;
  return (
    <div>
      <dt>{term}</dt>
      <dd>{value}</dd>
    </div>
  );
}
