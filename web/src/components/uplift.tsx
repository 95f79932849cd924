import { useMemo } from 'react';
import type { ChartConfiguration } from 'chart.js';
import type { OperatorsReportQuery } from '../gql/graphql';
import { ChartCanvas } from './chart';
import { TableWrap } from './table-wrap';

type Uplift = OperatorsReportQuery['memoryUplift'];
type Estimate = Uplift['referencedMemory'];

const ESTIMATES: {
  key: 'referencedMemory' | 'forgotPer100Turns' | 'conversationLength';
  name: string;
  unit: string;
  /** How the difference reads when memory helps. */
  better: string;
}[] = [
  {
    key: 'referencedMemory',
    name: 'Replies that referenced a memory',
    unit: 'share of replies',
    better: 'above zero',
  },
  {
    key: 'forgotPer100Turns',
    name: '“You forgot” complaints per 100 turns',
    unit: 'complaints',
    better: 'below zero',
  },
  {
    key: 'conversationLength',
    name: 'Conversation length',
    unit: 'turns',
    better: 'above zero',
  },
];

const number = (v: number | null | undefined) =>
  v == null ? '–' : Math.abs(v) < 10 ? v.toFixed(3) : v.toFixed(1);

/** One estimate: its 95% interval as a floating bar, the difference as a point, zero marked. */
function IntervalChart({
  name,
  unit,
  estimate,
}: {
  name: string;
  unit: string;
  estimate: Estimate;
}) {
  const { difference, low, high } = estimate;
  const config = useMemo<ChartConfiguration>(
    () => ({
      type: 'bar',
      data: {
        labels: [unit],
        datasets: [
          {
            type: 'bar',
            label: '95% interval',
            data: [[low ?? 0, high ?? 0]] as unknown as number[],
            backgroundColor: 'rgba(29, 78, 216, 0.25)',
            borderColor: '#1d4ed8',
            borderWidth: 1,
            barPercentage: 0.5,
          },
          {
            type: 'line',
            label: 'Difference (with memory − holdout)',
            data: [difference ?? 0],
            showLine: false,
            pointRadius: 6,
            pointBackgroundColor: '#b45309',
            borderColor: '#b45309',
          },
        ],
      },
      options: {
        indexAxis: 'y',
        scales: {
          x: {
            grid: {
              color: (ctx) => (ctx.tick?.value === 0 ? '#1b1b1f' : '#e5e7eb'),
              lineWidth: (ctx) => (ctx.tick?.value === 0 ? 2 : 1),
            },
            suggestedMin: Math.min(0, low ?? 0),
            suggestedMax: Math.max(0, high ?? 0),
          },
        },
        plugins: { legend: { position: 'bottom' } },
      },
    }),
    [difference, low, high, unit],
  );
  if (difference == null || low == null || high == null) {
    return <p className="muted">Not enough replies in both arms to estimate it.</p>;
  }
  return (
    <ChartCanvas
      label={`${name}: difference ${number(difference)}, 95% interval ${number(low)} to ${number(high)}`}
      config={config}
      height={150}
    />
  );
}

/** memoryUplift: each difference with its interval drawn, and the two arms in numbers. */
export function UpliftView({ uplift }: { uplift: Uplift }) {
  const arms = [
    ['With memory', uplift.withMemory],
    ['Holdout (no memory block)', uplift.holdout],
  ] as const;
  return (
    <>
      <p className="muted">
        Replies given the memory block against the holdout arm (MEMORY_AB_HOLDOUT, now{' '}
        {Math.round(uplift.holdoutShare * 100)}%), with {Math.round(uplift.confidence * 100)}%
        intervals. An interval that leaves out zero is significant.
      </p>
      <ul className="list" aria-label="Uplift estimates">
        {ESTIMATES.map(({ key, name, unit, better }) => {
          const e = uplift[key];
          return (
            <li key={key}>
              <h3>{name}</h3>
              <p>
                Difference {number(e.difference)} {unit} (from {number(e.low)} to {number(e.high)})
                {' · '}
                <strong>{e.significant ? 'significant' : 'not significant'}</strong>
                <span className="muted">
                  {' '}
                  · memory helps {better} · {e.method}
                </span>
              </p>
              <IntervalChart name={name} unit={unit} estimate={e} />
            </li>
          );
        })}
      </ul>
      <TableWrap label="The two arms">
        <table>
          <thead>
            <tr>
              <th scope="col">Arm</th>
              <th scope="col">Conversations</th>
              <th scope="col">Replies</th>
              <th scope="col">Referenced a memory</th>
              <th scope="col">“Forgot” per 100 turns</th>
              <th scope="col">Mean turns</th>
            </tr>
          </thead>
          <tbody>
            {arms.map(([name, arm]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>{arm.conversations}</td>
                <td>{arm.replies}</td>
                <td>
                  {arm.repliesReferencingMemory} ({Math.round(arm.referencedMemoryShare * 100)}%)
                </td>
                <td>{arm.forgotPer100Turns.toFixed(1)}</td>
                <td>{arm.meanConversationTurns.toFixed(1)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </>
  );
}
