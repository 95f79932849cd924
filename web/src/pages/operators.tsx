import { useMemo, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { ShowMore } from '../components/show-more';
import { ErrorNote, StatusNote } from '../components/status';
import { TableWrap } from '../components/table-wrap';
import { UpliftView } from '../components/uplift';
import { graphql } from '../gql';
import type { AuditLogQuery, FailedJobsQuery, OperatorsReportQuery } from '../gql/graphql';
import { label, when } from '../lib/format';
import { useMore } from '../lib/more';
import { today } from '../lib/periods';

const OperatorsReport = graphql(`
  query OperatorsReport($from: DateTime!, $to: DateTime!) {
    memoryMetricsReport(from: $from, to: $to) {
      assemblies
      recalls
      complaints
      hitRate
      p50Ms
      p95Ms
      meanTokens
      triggers {
        name
        description
        value
        threshold
        variable
        fires
        enoughData
        suggestion
      }
    }
    memoryUplift(from: $from, to: $to) {
      holdoutShare
      confidence
      withMemory {
        ...UpliftArmFields
      }
      holdout {
        ...UpliftArmFields
      }
      referencedMemory {
        ...UpliftEstimateFields
      }
      forgotPer100Turns {
        ...UpliftEstimateFields
      }
      conversationLength {
        ...UpliftEstimateFields
      }
    }
  }
`);

export const UpliftArmFields = graphql(`
  fragment UpliftArmFields on UpliftArm {
    conversations
    replies
    repliesReferencingMemory
    referencedMemoryShare
    forgotComplaints
    forgotPer100Turns
    meanConversationTurns
  }
`);

export const UpliftEstimateFields = graphql(`
  fragment UpliftEstimateFields on UpliftEstimate {
    difference
    low
    high
    significant
    method
  }
`);

const FailedJobs = graphql(`
  query FailedJobs($after: String) {
    failedJobs(first: 50, after: $after) {
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          type
          key
          attempts
          maxAttempts
          lastError
          payload
          updatedAt
        }
      }
    }
  }
`);

const RetryJob = graphql(`
  mutation RetryJob($id: ID!) {
    retryJob(id: $id) {
      id
      status
    }
  }
`);

const AuditLog = graphql(`
  query AuditLog($after: String) {
    auditLog(first: 50, after: $after) {
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          operation
          actorId
          targetUserId
          targetLegacyId
          targetConversationId
          details
          createdAt
        }
      }
    }
  }
`);

type Trigger = OperatorsReportQuery['memoryMetricsReport']['triggers'][number];

const NO_VARIABLES = {};
const selectJobs = (data: FailedJobsQuery) => data.failedJobs;
const selectAudit = (data: AuditLogQuery) => data.auditLog;

/** A trigger's value in its unit: milliseconds, complaints a week, or a share. */
function measure(name: Trigger['name'], value: number): string {
  if (name === 'P95_LATENCY') return `${Math.round(value)} ms`;
  if (name === 'FORGOT_COMPLAINTS') return `${value.toFixed(1)} a week`;
  return `${(value * 100).toFixed(1)}%`;
}

function daysAgo(days: number): string {
  const d = new Date(Date.now() - days * 86_400_000);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** For platform administrators: is memory worth its cost, and what needs a hand. */
export function OperatorsPage() {
  const [from, setFrom] = useState(daysAgo(7));
  const [to, setTo] = useState(today());
  const [period, setPeriod] = useState({ from: daysAgo(7), to: today() });
  // From the start of the first day to the end of the last, in the reader's zone.
  const variables = useMemo(
    () => ({
      from: new Date(`${period.from}T00:00:00`).toISOString(),
      to: new Date(`${period.to}T23:59:59.999`).toISOString(),
    }),
    [period],
  );
  const [{ data, error, fetching }] = useQuery({ query: OperatorsReport, variables });

  function submit(event: FormEvent) {
    event.preventDefault();
    setPeriod({ from, to });
  }

  const report = data?.memoryMetricsReport;
  return (
    <main id="main" className="page">
      <h1>For operators</h1>
      <p className="muted">
        Aggregates over every user, with no message text. Platform administrators only.
      </p>
      <form className="form inline" onSubmit={submit} aria-label="Period">
        <span>
          <label htmlFor="ops-from">From</label>
          <input
            id="ops-from"
            type="date"
            value={from}
            required
            onChange={(e) => setFrom(e.target.value)}
          />
        </span>
        <span>
          <label htmlFor="ops-to">To</label>
          <input
            id="ops-to"
            type="date"
            value={to}
            required
            onChange={(e) => setTo(e.target.value)}
          />
        </span>
        <button type="submit" className="primary" disabled={fetching}>
          Show the period
        </button>
      </form>
      <ErrorNote error={error} />

      {report && (
        <section aria-labelledby="triggers-heading">
          <h2 id="triggers-heading">Upgrade triggers</h2>
          <p className="muted">
            {report.assemblies} context assemblies and {report.recalls} recalls · hit rate{' '}
            {(report.hitRate * 100).toFixed(0)}% · p50 {Math.round(report.p50Ms)} ms, p95{' '}
            {Math.round(report.p95Ms)} ms · {report.complaints} “forgot” complaints
          </p>
          <ul className="list" aria-label="Triggers">
            {report.triggers.map((t) => (
              <li key={t.name}>
                <p className="fact-content">
                  <strong>{label(t.name)}</strong>{' '}
                  <span className={`badge ${t.fires ? 'private' : t.enoughData ? 'shared' : ''}`}>
                    {t.fires ? 'Fires' : t.enoughData ? 'Fine' : 'Not enough data'}
                  </span>
                </p>
                <p className="meta">
                  {measure(t.name, t.value)} against {measure(t.name, t.threshold)}{' '}
                  <span className="muted">
                    ({t.variable}) · {t.description}
                  </span>
                </p>
                {t.fires && <p>What to do: {t.suggestion}</p>}
              </li>
            ))}
          </ul>
        </section>
      )}

      {data && (
        <section aria-labelledby="uplift-heading">
          <h2 id="uplift-heading">Does memory help?</h2>
          <UpliftView uplift={data.memoryUplift} />
        </section>
      )}

      <FailedJobsSection />
    </main>
  );
}

function FailedJobsSection() {
  const [{ data, error }, refetch] = useQuery({ query: FailedJobs, variables: NO_VARIABLES });
  // After the failed jobs: their listing is recorded, and shows here.
  const [audit, refetchAudit] = useQuery({
    query: AuditLog,
    variables: NO_VARIABLES,
    pause: !data,
  });
  const jobs = useMore(FailedJobs, NO_VARIABLES, selectJobs, data?.failedJobs);
  const entries = useMore(AuditLog, NO_VARIABLES, selectAudit, audit.data?.auditLog);
  const [retried, retry] = useMutation(RetryJob);
  const [status, setStatus] = useState<string | null>(null);

  async function again(id: string, type: string) {
    const result = await retry({ id });
    if (result.data) {
      setStatus(`${type} queued again (${label(result.data.retryJob.status).toLowerCase()}).`);
      refetch({ requestPolicy: 'network-only' });
      refetchAudit({ requestPolicy: 'network-only' });
    }
  }

  return (
    <>
      <section aria-labelledby="jobs-heading">
        <h2 id="jobs-heading">Failed jobs</h2>
        <ErrorNote error={error ?? retried.error} />
        {status && <StatusNote>{status}</StatusNote>}
        {data && jobs.nodes.length === 0 && <p>No job has failed for good.</p>}
        <ul className="list" aria-label="Failed jobs">
          {jobs.nodes.map((job) => (
            <li key={job.id} className="row">
              <span>
                <strong>{job.type}</strong>{' '}
                <span className="muted">
                  · {job.attempts} of {job.maxAttempts} attempts · {when(job.updatedAt)} · key{' '}
                  <code>{job.key}</code>
                </span>
                {job.lastError && <span className="error pre"> {job.lastError}</span>}
              </span>
              <button type="button" onClick={() => void again(job.id, job.type)}>
                Retry<span className="sr-only"> {job.type}</span>
              </button>
            </li>
          ))}
        </ul>
        <ShowMore list={jobs} what="failed jobs" />
      </section>

      <section aria-labelledby="audit-heading">
        <h2 id="audit-heading">Audit log</h2>
        <p className="muted">
          Administrators’ uses of other users’ data: listing failed jobs, retrying one, debugging a
          retrieval. Reading this page’s failed jobs is recorded too.
        </p>
        <ErrorNote error={audit.error} />
        <TableWrap label="Audit log entries">
          <table aria-label="Audit log">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
                <th scope="col">By</th>
                <th scope="col">About</th>
              </tr>
            </thead>
            <tbody>
              {entries.nodes.map((entry) => (
                <tr key={entry.id}>
                  <td>{when(entry.createdAt)}</td>
                  <td>{label(entry.operation)}</td>
                  <td>
                    <code>{entry.actorId ?? 'an account since deleted'}</code>
                  </td>
                  <td>
                    <AuditTargets entry={entry} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
        <ShowMore list={entries} what="audit log entries" />
      </section>
    </>
  );
}

function AuditTargets({
  entry,
}: {
  entry: {
    targetUserId?: string | null;
    targetLegacyId?: string | null;
    targetConversationId?: string | null;
    details: Record<string, unknown>;
  };
}) {
  const jobs = Array.isArray(entry.details.jobIds) ? entry.details.jobIds.length : 0;
  const parts = [
    entry.targetUserId && `user ${entry.targetUserId}`,
    entry.targetLegacyId && `legacy ${entry.targetLegacyId}`,
    entry.targetConversationId && `conversation ${entry.targetConversationId}`,
    jobs && `${jobs} job${jobs === 1 ? '' : 's'}`,
  ].filter(Boolean);
  return <code>{parts.join(' · ') || '–'}</code>;
}
