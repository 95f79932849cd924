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
import { when } from '../lib/format';
import { nameOf, type Person } from '../lib/people';
import { nodesOf } from '../lib/more';

const ConversationMessages = graphql(`
  query ConversationMessages($id: ID!, $legacyId: ID!) {
    me {
      id
      memoryPaused
      rememberByDefault
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
  subscription TurnAdded($conversationId: ID!, $afterTurnIndex: Int) {
    messageAdded(conversationId: $conversationId, afterTurnIndex: $afterTurnIndex) {
      id
      role
      turnIndex
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
  const turns = nodesOf(data?.conversation.messages) ?? [];
  // Live turns pick up after the last turn the first load showed: none stored in between is
  // missed. Fixed from then on (a new value would subscribe again at every turn); on a
  // reconnect the subscription resumes after the last turn it received (lib/resume.ts).
  const [resume, setResume] = useState<{ conversationId: string; after: number } | null>(null);
  const shownUpTo = turns.reduce((last, t) => Math.max(last, t.turnIndex), -1);
  const loaded = conversation?.id === conversationId;
  useEffect(() => {
    if (loaded && resume?.conversationId !== conversationId) {
      setResume({ conversationId, after: shownUpTo });
    }
  }, [loaded, resume, conversationId, shownUpTo]);
  const after = resume?.conversationId === conversationId ? resume.after : null;
  useSubscription(
    {
      query: TurnAdded,
      variables: { conversationId, afterTurnIndex: after ?? -1 },
      pause: !taking || after === null,
    },
    onTurn,
  );

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
      {conversation && taking && data && (
        <section className="remember" aria-labelledby="remember-heading">
          <h2 id="remember-heading" className="sr-only">
            Remembering
          </h2>
          <label className="check switch">
            <input
              type="checkbox"
              role="switch"
              checked={conversation.remember}
              disabled={remembered.fetching}
              onChange={(e) => void setRemember({ conversationId, on: e.target.checked })}
            />
            Remember what I say in this conversation: {conversation.remember ? 'on' : 'off'}
          </label>
          <p className="muted">
            {data.me.memoryPaused
              ? 'Your memory is paused (see Memories): Keepsake remembers nothing new about you, whatever this switch says.'
              : conversation.remember
                ? 'Keepsake may remember things you tell it about yourself here, and bring them back later. You see and forget them under Memories.'
                : 'Keepsake keeps this conversation for you, but remembers nothing about you from it.'}
            {together &&
              ' Each person here has their own switch: Keepsake remembers things about someone only from what they said themselves, while theirs is on.'}
          </p>
          {turns.length === 0 && (
            <p className="notice" role="status">
              Remembering is {conversation.remember ? 'on' : 'off'} in this conversation.{' '}
              {data.me.rememberByDefault
                ? 'Your new conversations start with it on, as you chose under Memories.'
                : 'New conversations start with it off unless you choose otherwise, under Memories or when you start one.'}
            </p>
          )}
        </section>
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
      {!user && g && <WhatWasUsed turn={turn} legacyId={legacyId} />}
    </li>
  );
}

/** Where an item came from, as a family would say it. */
const SECTION_WORDS: Record<string, string> = {
  FACTS: "the family's facts",
  PROFILE: 'your profile',
  MEMORIES: 'your memories',
  PERIODS: 'looking back',
  STORIES: "the family's stories",
  SUMMARIES: 'summaries of earlier talk',
  TURNS: 'earlier conversations',
};

/**
 * What Keepsake had in mind for a reply, in a family's words: your memories it was given, and
 * where the rest came from. The model, token counts and scores are there for whoever opens
 * "Technical details".
 */
function WhatWasUsed({ turn, legacyId }: { turn: Turn; legacyId: string }) {
  const g = turn.generation!;
  const counts = new Map<string, number>();
  for (const item of g.contextItems) counts.set(item.section, (counts.get(item.section) ?? 0) + 1);
  const facts = g.contextItems.filter((i) => i.sourceType === 'FACT');
  return (
    <details>
      <summary>What Keepsake used for this reply</summary>
      {turn.usedMemories.length === 0 && g.contextItems.length === 0 && (
        <p>Nothing beyond this conversation.</p>
      )}
      {turn.usedMemories.length > 0 && (
        <>
          <h3>Your memories</h3>
          <ul className="list">
            {turn.usedMemories.map((m) => (
              <li key={m.id}>
                “{m.content}”{' '}
                <span className="muted">
                  {m.conversationId ? (
                    <>
                      from{' '}
                      <Link href={`/legacies/${legacyId}/conversations/${m.conversationId}`}>
                        a conversation
                      </Link>
                      {m.sourceTurnIndex != null && `, message ${m.sourceTurnIndex + 1}`}
                    </>
                  ) : (
                    'you asked Keepsake to remember it'
                  )}
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      {counts.size > 0 && (
        <p>
          Also:{' '}
          {[...counts]
            .map(([section, n]) => `${n} from ${SECTION_WORDS[section] ?? section.toLowerCase()}`)
            .join(', ')}
          {facts.length > 0 && (
            <>
              {' ('}
              {facts.map((item, i) => (
                <span key={item.recallItemId}>
                  {i > 0 && ', '}
                  <Link href={`/legacies/${legacyId}/facts/${item.sourceId}`}>fact {i + 1}</Link>
                </span>
              ))}
              {')'}
            </>
          )}
          .
        </p>
      )}
      {g.contextTruncated && (
        <p className="muted">Some of what it found was left out, to keep the reply focused.</p>
      )}
      <details className="technical">
        <summary>Technical details</summary>
        <p className="muted">
          Model {g.model} · {g.promptTokens} tokens in, {g.completionTokens} out, {g.contextTokens}{' '}
          of them retrieved{g.contextTruncated ? ' (some items left out for the budget)' : ''}
        </p>
        {g.contextItems.length > 0 && (
          <ul className="list">
            {g.contextItems.map((item) => (
              <li key={`${item.section}-${item.recallItemId}`} className="muted">
                {item.recallItemId} in {item.section.toLowerCase()}, score {item.score.toFixed(3)}
              </li>
            ))}
          </ul>
        )}
      </details>
    </details>
  );
}
