import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useSubscription } from 'urql';
import { Link, useParams } from 'wouter';
import { LegacyNav } from '../components/legacy-nav';
import { Participants } from '../components/participants';
import { ErrorNote } from '../components/status';
import { graphql } from '../gql';
import type {
  ConversationMessagesQuery,
  ReplyDeltaSubscription,
  TurnAddedSubscription,
} from '../gql/graphql';
import { label, when } from '../lib/format';
import { nameOf, type Person } from '../lib/people';
import { nodesOf } from '../lib/more';

const ConversationMessages = graphql(`
  query ConversationMessages($id: ID!, $legacyId: ID!) {
    me {
      id
    }
    legacy(id: $legacyId) {
      id
      members {
        user {
          id
          displayName
          email
        }
      }
    }
    conversation(id: $id) {
      id
      title
      remember
      legacyId
      messageCount
      startedBy
      readableUntilTurn
      participants {
        userId
        joinedAt
        leftAt
      }
      messages(last: 100) {
        edges {
          node {
            id
            role
            authorId
            content
            turnIndex
            occurredAt
            placeholder
            isError
            generation {
              model
              promptTokens
              completionTokens
              contextTokens
              contextTruncated
              contextItems {
                recallItemId
                sourceId
                sourceType
                section
                score
              }
            }
            usedMemories {
              id
              content
              type
              conversationId
              sourceTurnIndex
              source
            }
          }
        }
      }
    }
  }
`);

const SetRemember = graphql(`
  mutation SetRemember($conversationId: ID!, $on: Boolean!) {
    setConversationRemember(conversationId: $conversationId, on: $on) {
      id
      remember
    }
  }
`);

const SendMessage = graphql(`
  mutation SendMessage($input: SendMessageInput!) {
    sendMessage(input: $input) {
      message {
        id
      }
      reply {
        id
        content
      }
    }
  }
`);

const ReplyDelta = graphql(`
  subscription ReplyDelta($conversationId: ID!) {
    assistantReplyDelta(conversationId: $conversationId) {
      replyToMessageId
      sequence
      text
      done
      isError
    }
  }
`);

const TurnAdded = graphql(`
  subscription TurnAdded($conversationId: ID!) {
    messageAdded(conversationId: $conversationId) {
      id
      role
    }
  }
`);

/** An id for an idempotent send; randomUUID needs a secure context, getRandomValues does not. */
function messageId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

type Turn = NonNullable<
  ConversationMessagesQuery['conversation']
>['messages']['edges'][number]['node'];

export function ConversationPage() {
  const { legacyId, conversationId } = useParams<{ legacyId: string; conversationId: string }>();
  const [{ data, error }, refetch] = useQuery({
    query: ConversationMessages,
    variables: { id: conversationId, legacyId },
  });
  const conversation = data?.conversation;
  // One who left reads what was said until then: no sending, no switch, no live events.
  const taking = conversation ? conversation.readableUntilTurn == null : false;
  const [remembered, setRemember] = useMutation(SetRemember);
  const [sent, send] = useMutation(SendMessage);
  const [draft, setDraft] = useState('');
  const [pending, setPending] = useState<string | null>(null);
  // The reply as it streams: the deltas' text in sequence order, until the stored turn arrives.
  const [streaming, setStreaming] = useState<{ text: string; done: boolean } | null>(null);
  const end = useRef<HTMLDivElement>(null);

  const onDelta = useCallback((_prev: unknown, event: ReplyDeltaSubscription) => {
    const d = event.assistantReplyDelta;
    setStreaming((current) => ({
      text: (d.sequence === 0 ? '' : (current?.text ?? '')) + d.text,
      done: d.done,
    }));
    return event;
  }, []);
  useSubscription({ query: ReplyDelta, variables: { conversationId }, pause: !taking }, onDelta);

  const onTurn = useCallback(
    (_prev: unknown, event: TurnAddedSubscription) => {
      refetch({ requestPolicy: 'network-only' });
      if (event.messageAdded.role === 'ASSISTANT') setStreaming(null);
      return event;
    },
    [refetch],
  );
  useSubscription({ query: TurnAdded, variables: { conversationId }, pause: !taking }, onTurn);

  const turns = nodesOf(data?.conversation.messages) ?? [];
  // A block body: recent Chromium returns a promise from scrollIntoView, which React would
  // take for the effect's cleanup.
  useEffect(() => {
    void end.current?.scrollIntoView({ block: 'end' });
  }, [turns.length, streaming?.text]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const content = draft.trim();
    if (!content) return;
    setDraft('');
    setPending(content);
    setStreaming(null);
    await send({ input: { conversationId, content, clientMessageId: messageId() } });
    setPending(null);
    setStreaming(null);
    refetch({ requestPolicy: 'network-only' });
  }

  const me = data?.me.id ?? '';
  const members: Person[] = data?.legacy.members.map((m) => m.user) ?? [];
  const together = (conversation?.participants.length ?? 0) > 1;
  return (
    <main id="main" className="page">
      <h1>{conversation?.title ?? 'Conversation'}</h1>
      <LegacyNav legacyId={legacyId} />
      <p>
        <Link href={`/legacies/${legacyId}/conversations`}>All conversations</Link>
      </p>
      <ErrorNote error={error} />
      {conversation && (
        <Participants
          conversationId={conversationId}
          participants={conversation.participants}
          members={members}
          me={me}
          startedBy={conversation.startedBy}
          taking={taking}
          onChanged={() => refetch({ requestPolicy: 'network-only' })}
        />
      )}
      {conversation && !taking && (
        <p className="notice">
          You left this conversation: you read what was said while you took part, nothing after.
        </p>
      )}
      {conversation && taking && (
        <label className="check switch">
          <input
            type="checkbox"
            role="switch"
            checked={conversation.remember}
            disabled={remembered.fetching}
            onChange={(e) => void setRemember({ conversationId, on: e.target.checked })}
          />
          Remember things I say here {conversation.remember ? '(on)' : '(off)'}
        </label>
      )}
      {together && taking && (
        <p className="muted">
          Each participant has their own switch: memories about someone come only from their own
          turns, while theirs is on.
        </p>
      )}
      <ErrorNote error={remembered.error} />

      <section aria-label="Turns" className="chat">
        <ol className="turns">
          {turns.map((turn) => (
            <TurnItem
              key={turn.id}
              turn={turn}
              legacyId={legacyId}
              author={nameOf(members, turn.authorId, me)}
              together={together}
            />
          ))}
          {pending && !turns.some((t) => t.role === 'USER' && t.content === pending) && (
            <li className="turn user">
              <p className="who">You</p>
              <p className="pre">{pending}</p>
            </li>
          )}
        </ol>
        {streaming && (
          <div
            className="turn assistant streaming"
            aria-live="polite"
            data-testid="streaming-reply"
          >
            <p className="who">Agent {streaming.done ? '' : '(writing…)'}</p>
            <p className="pre">{streaming.text}</p>
          </div>
        )}
        <div ref={end} />
      </section>

      {taking && (
        <form className="composer" onSubmit={(e) => void submit(e)}>
          <label htmlFor="message">Your message</label>
          <textarea
            id="message"
            rows={3}
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey))
                e.currentTarget.form?.requestSubmit();
            }}
          />
          <button type="submit" className="primary" disabled={sent.fetching || !draft.trim()}>
            {sent.fetching ? 'Sending…' : 'Send'}
          </button>
        </form>
      )}
      <ErrorNote error={sent.error} />
    </main>
  );
}

/**
 * One turn, with who said it: a participant, or the agent and (in a together conversation) whom
 * it answered. A reply made for another participant alone reads as the API returns it: withheld.
 */
function TurnItem({
  turn,
  legacyId,
  author,
  together,
}: {
  turn: Turn;
  legacyId: string;
  author: string;
  together: boolean;
}) {
  const user = turn.role === 'USER';
  const g = turn.generation;
  const who = user
    ? author
    : together
      ? `Agent, answering ${author === 'You' ? 'you' : author}`
      : 'Agent';
  return (
    <li
      className={`turn ${user ? (author === 'You' ? 'user' : 'other') : 'assistant'}${turn.isError ? ' failed' : ''}`}
    >
      <p className="who">
        {who}{' '}
        <span className="muted">
          · {when(turn.occurredAt)}
          {turn.placeholder ? ' · notice' : ''}
        </span>
      </p>
      <p className="pre">{turn.content}</p>
      {!user && g && (
        <details>
          <summary>What was used</summary>
          <p className="muted">
            {g.model} · {g.promptTokens} prompt tokens, {g.completionTokens} in the reply,{' '}
            {g.contextTokens} of context{g.contextTruncated ? ' (some left out)' : ''}
          </p>
          {turn.usedMemories.length > 0 && (
            <>
              <h3>Memories</h3>
              <ul className="list">
                {turn.usedMemories.map((m) => (
                  <li key={m.id}>
                    “{m.content}” <span className="badge">{label(m.type)}</span>{' '}
                    <span className="muted">
                      {label(m.source)}
                      {m.conversationId && (
                        <>
                          {' · from '}
                          <Link href={`/legacies/${legacyId}/conversations/${m.conversationId}`}>
                            a conversation
                          </Link>
                          {m.sourceTurnIndex != null && `, turn ${m.sourceTurnIndex}`}
                        </>
                      )}
                    </span>
                  </li>
                ))}
              </ul>
            </>
          )}
          <h3>Context items</h3>
          {g.contextItems.length === 0 ? (
            <p>None.</p>
          ) : (
            <ul className="list">
              {g.contextItems.map((item) => (
                <li key={`${item.section}-${item.recallItemId}`}>
                  {label(item.sourceType)} in {item.section}{' '}
                  <span className="muted">
                    · score {item.score.toFixed(2)}
                    {item.sourceType === 'FACT' && (
                      <>
                        {' · '}
                        <Link href={`/legacies/${legacyId}/facts/${item.sourceId}`}>the fact</Link>
                      </>
                    )}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </details>
      )}
    </li>
  );
}
