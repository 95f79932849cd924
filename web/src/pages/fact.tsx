import { useCallback } from 'react';
import { useQuery, useSubscription } from 'urql';
import { Link, useParams } from 'wouter';
import { LegacyNav } from '../components/legacy-nav';
import { ErrorNote } from '../components/status';
import { graphql } from '../gql';
import type { FactWatchSubscription } from '../gql/graphql';
import { label, when } from '../lib/format';
import { VisibilityBadge } from '../components/visibility';

const FactDetails = graphql(`
  query FactDetails($id: ID!) {
    fact(id: $id) {
      id
      content
      category
      visibility
      status
      author {
        id
        displayName
        email
      }
      createdAt
      validFrom
      validTo
      sourceConversationId
      sources {
        id
        kind
        conversationId
        storyId
        page
        occurredAt
      }
      supersededBy {
        id
        content
      }
    }
    factHistory(id: $id) {
      id
      action
      actorId
      content
      category
      visibility
      status
      detail
      createdAt
      mentionCount
      relatedFact {
        id
        content
      }
    }
  }
`);

const FactWatch = graphql(`
  subscription FactWatch($legacyId: ID!) {
    factChanged(legacyId: $legacyId) {
      change
      factId
    }
  }
`);

export function FactPage() {
  const { legacyId, factId } = useParams<{ legacyId: string; factId: string }>();
  const [{ data, error, fetching }, refetch] = useQuery({
    query: FactDetails,
    variables: { id: factId },
  });
  const onEvent = useCallback(
    (_prev: unknown, event: FactWatchSubscription) => {
      if (event.factChanged.factId === factId) refetch({ requestPolicy: 'network-only' });
      return event;
    },
    [factId, refetch],
  );
  useSubscription({ query: FactWatch, variables: { legacyId } }, onEvent);

  const fact = data?.fact;
  const missing = error?.graphQLErrors.some((e) => e.extensions?.code === 'NOT_FOUND');
  return (
    <main id="main" className="page">
      <h1>Fact history</h1>
      <LegacyNav legacyId={legacyId} />
      <p>
        <Link href={`/legacies/${legacyId}/facts`}>Back to the facts</Link>
      </p>
      {missing ? (
        <p role="alert" className="notice">
          This fact does not exist or is not shared with you.
        </p>
      ) : (
        <ErrorNote error={error} />
      )}
      {fetching && !data && <p>Loading…</p>}
      {fact && data && (
        <>
          <section className="card" aria-labelledby="fact-heading">
            <h2 id="fact-heading">{fact.content}</h2>
            <p className="meta">
              <VisibilityBadge visibility={fact.visibility} />
              <span className="badge">{label(fact.category)}</span>
              <span className="badge">{label(fact.status)}</span>
              <span className="muted">
                by {fact.author?.displayName ?? fact.author?.email ?? 'a member'} · since{' '}
                {when(fact.validFrom)}
                {fact.validTo ? ` until ${when(fact.validTo)}` : ''}
              </span>
            </p>
            {fact.supersededBy && (
              <p>
                Superseded by{' '}
                <Link href={`/legacies/${legacyId}/facts/${fact.supersededBy.id}`}>
                  “{fact.supersededBy.content}”
                </Link>
              </p>
            )}
            {fact.sources.length > 0 && (
              <>
                <h3>Where you said it</h3>
                <ul className="list">
                  {fact.sources.map((s) => (
                    <li key={s.id}>
                      {label(s.kind)} · {when(s.occurredAt)}
                      {s.conversationId && (
                        <>
                          {' · '}
                          <Link href={`/legacies/${legacyId}/conversations/${s.conversationId}`}>
                            the conversation
                          </Link>
                        </>
                      )}
                      {s.page != null && ` · page ${s.page}`}
                    </li>
                  ))}
                </ul>
              </>
            )}
          </section>
          <section aria-labelledby="timeline-heading">
            <h2 id="timeline-heading">Timeline</h2>
            <ol className="timeline">
              {data.factHistory.map((entry) => (
                <li key={entry.id}>
                  <p>
                    <strong>{label(entry.action)}</strong>{' '}
                    <span className="muted">
                      {when(entry.createdAt)}
                      {entry.actorId ? '' : ' · by Keepsake'}
                    </span>
                  </p>
                  <p>
                    “{entry.content}” · {label(entry.category)} · {label(entry.visibility)} ·{' '}
                    {label(entry.status)}
                  </p>
                  {entry.detail && <p className="muted">{entry.detail}</p>}
                  {entry.relatedFact && (
                    <p>
                      Related:{' '}
                      <Link href={`/legacies/${legacyId}/facts/${entry.relatedFact.id}`}>
                        “{entry.relatedFact.content}”
                      </Link>
                    </p>
                  )}
                </li>
              ))}
            </ol>
          </section>
        </>
      )}
    </main>
  );
}
