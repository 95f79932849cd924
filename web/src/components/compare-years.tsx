import { useMemo, useState, type FormEvent } from 'react';
import { useClient } from 'urql';
import type { ChartConfiguration } from 'chart.js';
import { graphql } from '../gql';
import type { CompareYearsQuery, MonthSummariesQuery } from '../gql/graphql';
import { errorMessage } from '../lib/format';
import { MONTHS } from '../lib/periods';
import { ChartCanvas } from './chart';
import { TableWrap } from './table-wrap';
import { ErrorNote } from './status';
import { nodesOf } from '../lib/more';

const Compare = graphql(`
  query CompareYears($legacyId: ID!, $year: Int!, $otherYear: Int!, $month: Int) {
    compareYears(legacyId: $legacyId, year: $year, otherYear: $otherYear, month: $month) {
      year
      otherYear
      month
      text
      sharedThemes
      newThemes
      fadedThemes
      current {
        ...YearSideFields
      }
      other {
        ...YearSideFields
      }
    }
  }
`);

export const YearSideFields = graphql(`
  fragment YearSideFields on YearSide {
    year
    conversationCount
    turnCount
    emotionalTone
    themes
    people
    places
    summaries {
      id
      period
      start
    }
  }
`);

const MonthSummaries = graphql(`
  query MonthSummaries($legacyId: ID!, $after: String) {
    periodSummaries(legacyId: $legacyId, period: MONTH, first: 100, after: $after) {
      edges {
        node {
          id
          start
          conversationCount
          turnCount
          keyThemes
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
`);

type Comparison = CompareYearsQuery['compareYears'];
type Side = Comparison['current'];
type Month = MonthSummariesQuery['periodSummaries']['edges'][number]['node'];

/** Per month of one year: what its month summary says (nothing for a month without one). */
function byMonth(months: readonly Month[], year: number): (Month | null)[] {
  return MONTHS.map(
    (_, i) =>
      months.find((m) => m.start === `${year}-${String(i + 1).padStart(2, '0')}-01`) ?? null,
  );
}

/**
 * Two years (or the same month of both) side by side, as compareYears returns them, and a plot
 * of what the month summaries of both years hold: conversations and turns per month.
 */
export function CompareYears({ legacyId }: { legacyId: string }) {
  const client = useClient();
  const thisYear = new Date().getFullYear();
  const [year, setYear] = useState(String(thisYear - 1));
  const [otherYear, setOtherYear] = useState(String(thisYear - 2));
  const [month, setMonth] = useState('');
  const [result, setResult] = useState<{ comparison: Comparison; months: Month[] } | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setProblem(null);
    setBusy(true);
    const years = { year: Number(year), otherYear: Number(otherYear) };
    const compared = await client
      .query(Compare, { legacyId, ...years, month: month ? Number(month) : null })
      .toPromise();
    // The month summaries of both years, newest first, a page at a time back to the older year.
    const months: Month[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const read: { data?: MonthSummariesQuery; error?: unknown } = await client
        .query(MonthSummaries, { legacyId, after })
        .toPromise();
      if (read.error || !read.data) break;
      months.push(...nodesOf(read.data.periodSummaries));
      const oldest = months.at(-1)?.start ?? '';
      const { hasNextPage, endCursor } = read.data.periodSummaries.pageInfo;
      if (!hasNextPage || oldest < `${Math.min(years.year, years.otherYear)}`) break;
      after = endCursor ?? null;
    }
    setBusy(false);
    if (compared.error) {
      setResult(null);
      setProblem(errorMessage(compared.error));
      return;
    }
    setResult({ comparison: compared.data!.compareYears, months });
  }

  return (
    <section className="card" aria-labelledby="compare-heading">
      <h2 id="compare-heading">Compare years</h2>
      <form className="form inline" onSubmit={(e) => void submit(e)}>
        <span>
          <label htmlFor="compare-year">Year</label>
          <input
            id="compare-year"
            type="number"
            min={1900}
            max={thisYear}
            value={year}
            required
            onChange={(e) => setYear(e.target.value)}
          />
        </span>
        <span>
          <label htmlFor="compare-other">With</label>
          <input
            id="compare-other"
            type="number"
            min={1900}
            max={thisYear}
            value={otherYear}
            required
            onChange={(e) => setOtherYear(e.target.value)}
          />
        </span>
        <span>
          <label htmlFor="compare-month">Which part</label>
          <select id="compare-month" value={month} onChange={(e) => setMonth(e.target.value)}>
            <option value="">The whole year</option>
            {MONTHS.map((m, i) => (
              <option key={m} value={i + 1}>
                {m}
              </option>
            ))}
          </select>
        </span>
        <button type="submit" className="primary" disabled={busy}>
          Compare
        </button>
      </form>
      <ErrorNote error={problem} />
      {result && <ComparisonView comparison={result.comparison} months={result.months} />}
    </section>
  );
}

function ComparisonView({ comparison: c, months }: { comparison: Comparison; months: Month[] }) {
  const current = useMemo(() => byMonth(months, c.year), [months, c.year]);
  const other = useMemo(() => byMonth(months, c.otherYear), [months, c.otherYear]);
  const config = useMemo<ChartConfiguration>(
    () => ({
      type: 'bar',
      data: {
        labels: MONTHS,
        datasets: [
          {
            label: `Messages ${c.year}`,
            data: current.map((m) => m?.turnCount ?? 0),
            backgroundColor: '#1d4ed8',
          },
          {
            label: `Messages ${c.otherYear}`,
            data: other.map((m) => m?.turnCount ?? 0),
            backgroundColor: '#b45309',
          },
        ],
      },
      options: { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } },
    }),
    [c.year, c.otherYear, current, other],
  );
  const any = current.some(Boolean) || other.some(Boolean);

  return (
    <>
      <p>{c.text}</p>
      <div className="cards">
        <SideCard side={c.current} />
        <SideCard side={c.other} />
      </div>
      <dl className="pairs">
        <div>
          <dt>Came up in both</dt>
          <dd>{c.sharedThemes.join(', ') || 'none'}</dd>
        </div>
        <div>
          <dt>New in {c.year}</dt>
          <dd>{c.newThemes.join(', ') || 'none'}</dd>
        </div>
        <div>
          <dt>Faded since {c.otherYear}</dt>
          <dd>{c.fadedThemes.join(', ') || 'none'}</dd>
        </div>
      </dl>
      <h3>Month by month</h3>
      {any ? (
        <>
          <ChartCanvas
            label={`Messages per month in ${c.year} and ${c.otherYear}, from the month summaries`}
            config={config}
          />
          <details>
            <summary>The numbers and themes per month</summary>
            <TableWrap label="Month by month, in numbers">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Month</th>
                    <th scope="col">{c.year}</th>
                    <th scope="col">{c.otherYear}</th>
                  </tr>
                </thead>
                <tbody>
                  {MONTHS.map((name, i) => (
                    <tr key={name}>
                      <th scope="row">{name}</th>
                      <MonthCell month={current[i]} />
                      <MonthCell month={other[i]} />
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          </details>
        </>
      ) : (
        <p>No month summaries in either year yet.</p>
      )}
    </>
  );
}

function MonthCell({ month }: { month: Month | null }) {
  if (!month) return <td className="muted">—</td>;
  return (
    <td>
      {month.conversationCount} conversation{month.conversationCount === 1 ? '' : 's'},{' '}
      {month.turnCount} message{month.turnCount === 1 ? '' : 's'}
      {month.keyThemes.length > 0 && (
        <span className="muted"> · {month.keyThemes.slice(0, 5).join(', ')}</span>
      )}
    </td>
  );
}

function SideCard({ side }: { side: Side }) {
  return (
    <div className="card" aria-label={String(side.year)} role="group">
      <h3>{side.year}</h3>
      <dl className="pairs">
        <div>
          <dt>Conversations</dt>
          <dd>{side.conversationCount}</dd>
        </div>
        <div>
          <dt>Messages</dt>
          <dd>{side.turnCount}</dd>
        </div>
        {side.emotionalTone && (
          <div>
            <dt>How it felt</dt>
            <dd>{side.emotionalTone}</dd>
          </div>
        )}
        <div>
          <dt>What came up</dt>
          <dd>{side.themes.join(', ') || 'none'}</dd>
        </div>
        {side.people.length > 0 && (
          <div>
            <dt>People</dt>
            <dd>{side.people.join(', ')}</dd>
          </div>
        )}
        <div>
          <dt>From</dt>
          <dd>
            {side.summaries.length} stored summar{side.summaries.length === 1 ? 'y' : 'ies'}
          </dd>
        </div>
      </dl>
    </div>
  );
}
