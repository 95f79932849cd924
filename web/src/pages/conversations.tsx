import { useState, type ChangeEvent, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { Link, useLocation, useParams } from 'wouter';
import { LegacyNav } from '../components/legacy-nav';
import { ErrorNote, StatusNote } from '../components/status';
import { graphql } from '../gql';
import { parseConversationFile } from '../lib/conversation-file';
import { errorMessage, when } from '../lib/format';
import { nameOf } from '../lib/people';
import { nodesOf } from '../lib/more';

const ConversationList = graphql(`
  query ConversationList($legacyId: ID!) {
    me {
      id
      rememberByDefault
    }
    legacy(id: $legacyId) {
      id
      name
      members {
        user {
          id
          displayName
          email
        }
      }
    }
    conversations(legacyId: $legacyId, first: 50) {
      edges {
        node {
          id
          title
          messageCount
          remember
          lastActivityAt
          startedBy
          readableUntilTurn
          participants {
            userId
            leftAt
          }
        }
      }
    }
  }
`);

const StartConversation = graphql(`
  mutation StartConversation($input: StartConversationInput!) {
    startConversation(input: $input) {
      id
    }
  }
`);

const ImportConversation = graphql(`
  mutation ImportConversation($input: ImportConversationInput!) {
    importConversation(input: $input) {
      importedCount
      conversation {
        id
        title
      }
    }
  }
`);

export function ConversationsPage() {
  const { legacyId } = useParams<{ legacyId: string }>();
  const [{ data, error }, refetch] = useQuery({ query: ConversationList, variables: { legacyId } });
  const [started, start] = useMutation(StartConversation);
  const [, navigate] = useLocation();
  const [title, setTitle] = useState('');
  const [remember, setRemember] = useState<boolean | null>(null);
  const [together, setTogether] = useState<string[]>([]);
  const rememberOn = remember ?? data?.me.rememberByDefault ?? false;
  const me = data?.me.id;
  const people = data?.legacy.members.map((m) => m.user) ?? [];
  const others = people.filter((p) => p.id !== me);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const result = await start({
      input: {
        legacyId,
        title: title.trim() || null,
        remember: rememberOn,
        participantIds: together.length ? together : null,
      },
    });
    if (result.data)
      navigate(`/legacies/${legacyId}/conversations/${result.data.startConversation.id}`);
  }

  return (
    <main id="main" className="page">
      <h1>Conversations{data ? ` about ${data.legacy.name}` : ''}</h1>
      <LegacyNav legacyId={legacyId} name={data?.legacy.name} />
      <ErrorNote error={error} />
      <section className="card" aria-labelledby="start-heading">
        <h2 id="start-heading">Start a conversation</h2>
        <form className="form" onSubmit={(e) => void submit(e)}>
          <label htmlFor="conversation-title">Title (optional)</label>
          <input id="conversation-title" value={title} onChange={(e) => setTitle(e.target.value)} />
          <label className="check">
            <input
              type="checkbox"
              role="switch"
              checked={rememberOn}
              onChange={(e) => setRemember(e.target.checked)}
            />
            Remember what I say in this conversation: {rememberOn ? 'on' : 'off'}
          </label>
          <p className="muted">
            {rememberOn
              ? 'Keepsake may remember things you tell it about yourself, and bring them back later.'
              : 'Keepsake keeps the conversation, but remembers nothing about you from it.'}{' '}
            {data?.me.rememberByDefault
              ? 'On is your default (under Memories).'
              : 'Off is the default; you can turn it on here, or later in the conversation.'}
          </p>
          {others.length > 0 && (
            <fieldset className="choices">
              <legend>Talk together with (optional)</legend>
              {others.map((p) => (
                <label key={p.id} className="check">
                  <input
                    type="checkbox"
                    checked={together.includes(p.id)}
                    onChange={(e) =>
                      setTogether((ids) =>
                        e.target.checked ? [...ids, p.id] : ids.filter((id) => id !== p.id),
                      )
                    }
                  />
                  {nameOf(people, p.id)}
                </label>
              ))}
              <p className="muted">
                Everyone in it reads every message and every reply; each person has their own
                remember switch, off until they turn it on.
              </p>
            </fieldset>
          )}
          <ErrorNote error={started.error} />
          <button type="submit" className="primary">
            Start
          </button>
        </form>
      </section>

      <section aria-labelledby="list-heading">
        <h2 id="list-heading">Your conversations</h2>
        {data && nodesOf(data.conversations).length === 0 && <p>No conversations yet.</p>}
        <ul className="list">
          {(nodesOf(data?.conversations) ?? []).map((c) => (
            <li key={c.id} className="row">
              <Link href={`/legacies/${legacyId}/conversations/${c.id}`}>
                {c.title ?? 'Untitled conversation'}
              </Link>
              <span className="muted">
                {c.participants.length > 1 &&
                  `with ${c.participants
                    .filter((p) => p.userId !== me)
                    .map((p) => nameOf(people, p.userId, me))
                    .join(', ')} · `}
                {c.readableUntilTurn != null && 'you left · '}
                {c.messageCount} message{c.messageCount === 1 ? '' : 's'} · remembering{' '}
                {c.remember ? 'on' : 'off'} · {when(c.lastActivityAt)}
              </span>
            </li>
          ))}
        </ul>
      </section>

      <ImportForm
        legacyId={legacyId}
        onImported={() => refetch({ requestPolicy: 'network-only' })}
      />
    </main>
  );
}

type Stage = { step: number; text: string } | null;

function ImportForm({ legacyId, onImported }: { legacyId: string; onImported: () => void }) {
  const [imported, importConversation] = useMutation(ImportConversation);
  const [stage, setStage] = useState<Stage>(null);
  const [problem, setProblem] = useState<string | null>(null);

  async function pick(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    setProblem(null);
    setStage({ step: 1, text: `Reading ${file.name}…` });
    let parsed;
    try {
      parsed = parseConversationFile(await file.text());
    } catch (err) {
      setStage(null);
      setProblem((err as Error).message);
      return;
    }
    setStage({ step: 2, text: `Importing ${parsed.messages.length} messages…` });
    const result = await importConversation({
      input: {
        legacyId,
        title: parsed.title ?? file.name.replace(/\.json$/i, ''),
        messages: parsed.messages,
      },
    });
    if (result.error) {
      setStage(null);
      setProblem(errorMessage(result.error));
      return;
    }
    setStage({
      step: 3,
      text: `Imported ${result.data!.importConversation.importedCount} messages.`,
    });
    onImported();
  }

  return (
    <section className="card" aria-labelledby="import-heading">
      <h2 id="import-heading">Import a conversation</h2>
      <p>
        A JSON file:{' '}
        <code>
          {
            '{ "title": "…", "messages": [{ "role": "user", "content": "…", "occurredAt": "2020-05-01T10:00:00Z" }] }'
          }
        </code>
      </p>
      <label htmlFor="import-file">Conversation file (JSON)</label>
      <input
        id="import-file"
        type="file"
        accept="application/json,.json"
        onChange={(e) => void pick(e)}
      />
      {stage && (
        <>
          <label htmlFor="import-progress" className="sr-only">
            Import progress
          </label>
          <progress id="import-progress" max={3} value={stage.step} />
          <StatusNote>{stage.text}</StatusNote>
        </>
      )}
      {imported.data && stage?.step === 3 && (
        <p>
          <Link
            href={`/legacies/${legacyId}/conversations/${imported.data.importConversation.conversation.id}`}
          >
            Open the imported conversation
          </Link>
        </p>
      )}
      <ErrorNote error={problem} />
    </section>
  );
}
