import { useState, type FormEvent } from 'react';
import { useClient, useMutation } from 'urql';
import { Link, useParams } from 'wouter';
import { LegacyNav } from '../components/legacy-nav';
import { ErrorNote, StatusNote } from '../components/status';
import { graphql } from '../gql';
import type { RecallQuery } from '../gql/graphql';
import { day, errorMessage, messages, removeWord, sourceName } from '../lib/format';

const Recall = graphql(`
  query Recall($legacyId: ID!, $query: String!) {
    recall(legacyId: $legacyId, query: $query, first: 20) {
      edges {
        score
        node {
          id
          sourceType
          text
          forgettable
          provenance {
            conversationId
            occurredAt
            turnRange {
              start
              end
            }
            story {
              storyId
              title
              page
              charStart
              charEnd
            }
          }
        }
      }
    }
  }
`);

const ForgetRecallItem = graphql(`
  mutation ForgetRecallItem($id: ID!, $confirm: Boolean) {
    forgetRecallItem(id: $id, confirm: $confirm) {
      forgotten
      requiresConfirmation
      wouldDelete
    }
  }
`);

type Item = RecallQuery['recall']['edges'][number]['node'] & { score: number };

export function RecallPage() {
  const { legacyId } = useParams<{ legacyId: string }>();
  const client = useClient();
  const [query, setQuery] = useState('');
  const [items, setItems] = useState<Item[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [forgot, forget] = useMutation(ForgetRecallItem);

  async function ask(event?: FormEvent) {
    event?.preventDefault();
    setProblem(null);
    const result = await client
      .query(Recall, { legacyId, query: query.trim() }, { requestPolicy: 'network-only' })
      .toPromise();
    if (result.error) setProblem(errorMessage(result.error));
    setItems(result.data?.recall.edges.map((e) => ({ ...e.node, score: e.score })) ?? null);
  }

  async function forgetItem(item: Item, confirmed = false) {
    const result = await forget({ id: item.id, confirm: confirmed || null });
    const r = result.data?.forgetRecallItem;
    if (!r) return;
    if (r.requiresConfirmation) {
      if (confirm(`This deletes ${r.wouldDelete ?? 'more than this passage'}. Go on?`)) {
        await forgetItem(item, true);
      }
      return;
    }
    if (r.forgotten) {
      setNotice(
        `${item.sourceType === 'MEMORY' ? 'Forgotten' : item.sourceType === 'PROFILE' ? 'Cleared' : 'Deleted'}: “${item.text.slice(0, 80)}”`,
      );
      setItems((current) => current?.filter((i) => i.id !== item.id) ?? null);
    }
  }

  return (
    <main id="main" className="page">
      <h1>What do you remember?</h1>
      <LegacyNav legacyId={legacyId} />
      <form className="filters" role="search" aria-label="Recall" onSubmit={(e) => void ask(e)}>
        <span className="grow">
          <label htmlFor="recall-query">What do you remember about…</label>
          <input
            id="recall-query"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            required
          />
        </span>
        <button type="submit" className="primary">
          Recall
        </button>
      </form>
      <ErrorNote error={problem ?? forgot.error} />
      {notice && <StatusNote>{notice}</StatusNote>}
      {items && items.length === 0 && <p>Nothing comes to mind.</p>}
      <ul className="list" aria-label="Recalled">
        {items?.map((item) => (
          <li key={item.id} className="row">
            <span>
              <span className="badge">{sourceName(item.sourceType)}</span> {item.text}
              <span className="muted">
                {item.provenance.occurredAt && ` · ${day(item.provenance.occurredAt)}`}
                {item.sourceType !== 'FACT' &&
                  item.provenance.turnRange &&
                  `, ${messages(item.provenance.turnRange)}`}
                {item.provenance.conversationId && (
                  <>
                    {' · '}
                    <Link
                      href={`/legacies/${legacyId}/conversations/${item.provenance.conversationId}`}
                    >
                      open the conversation
                    </Link>
                  </>
                )}
              </span>
              {item.provenance.story && (
                <>
                  {' · '}
                  <Link
                    href={`/legacies/${legacyId}/stories/${item.provenance.story.storyId}?page=${item.provenance.story.page}&mark=${item.provenance.story.charStart}-${item.provenance.story.charEnd}`}
                  >
                    Open “{item.provenance.story.title}” at page {item.provenance.story.page}
                  </Link>
                </>
              )}
              <details className="technical">
                <summary>How it matched</summary>
                <p className="muted">
                  Score {item.score.toFixed(3)} for this question (answers are listed best first;
                  scores compare within one question only).
                </p>
              </details>
            </span>
            {item.forgettable && (
              <button type="button" onClick={() => void forgetItem(item)}>
                {removeWord(item.sourceType)}
                <span className="sr-only"> this {sourceName(item.sourceType).toLowerCase()}</span>
              </button>
            )}
          </li>
        ))}
      </ul>
    </main>
  );
}
