import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../gql';
import { when } from '../lib/format';
import { nameOf, type Person } from '../lib/people';
import { ErrorNote, StatusNote } from './status';

const AddParticipant = graphql(`
  mutation AddParticipant($input: AddConversationParticipantInput!) {
    addConversationParticipant(input: $input) {
      id
      participants {
        userId
        joinedAt
        leftAt
      }
    }
  }
`);

const LeaveConversation = graphql(`
  mutation LeaveConversation($conversationId: ID!) {
    leaveConversation(conversationId: $conversationId) {
      id
      readableUntilTurn
      participants {
        userId
        joinedAt
        leftAt
      }
    }
  }
`);

export interface Participation {
  userId: string;
  joinedAt: string;
  leftAt?: string | null;
}

/**
 * Who takes part in a conversation, and (for a participant) bringing in another member of the
 * legacy or leaving it. The starter does not leave: they delete the conversation instead.
 */
export function Participants({
  conversationId,
  participants,
  members,
  me,
  startedBy,
  taking,
  onChanged,
}: {
  conversationId: string;
  participants: readonly Participation[];
  members: readonly Person[];
  me: string;
  startedBy: string;
  /** Whether the viewer still takes part (not left). */
  taking: boolean;
  onChanged: () => void;
}) {
  const [added, add] = useMutation(AddParticipant);
  const [left, leave] = useMutation(LeaveConversation);
  const [pick, setPick] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const current = new Set(participants.filter((p) => !p.leftAt).map((p) => p.userId));
  const others = members.filter((m) => !current.has(m.id));

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!pick) return;
    const result = await add({ input: { conversationId, userId: pick } });
    if (result.data) {
      setStatus(`${nameOf(members, pick)} now takes part.`);
      setPick('');
      onChanged();
    }
  }

  async function leaveIt() {
    const result = await leave({ conversationId });
    if (result.data) {
      setStatus('You left this conversation.');
      onChanged();
    }
  }

  return (
    <section className="card" aria-labelledby="participants-heading">
      <h2 id="participants-heading">Who takes part</h2>
      <ul className="list" aria-label="Participants">
        {participants.map((p) => (
          <li key={p.userId}>
            <strong>{nameOf(members, p.userId, me)}</strong>
            <span className="muted">
              {p.userId === startedBy ? ' · started it' : ''} · joined {when(p.joinedAt)}
              {p.leftAt ? ` · left ${when(p.leftAt)}` : ''}
            </span>
          </li>
        ))}
      </ul>
      {status && <StatusNote>{status}</StatusNote>}
      {taking && others.length > 0 && (
        <form className="form inline" onSubmit={(e) => void submit(e)}>
          <label htmlFor="add-participant">Bring in a member</label>
          <select id="add-participant" value={pick} onChange={(e) => setPick(e.target.value)}>
            <option value="">Choose…</option>
            {others.map((m) => (
              <option key={m.id} value={m.id}>
                {nameOf(members, m.id)}
              </option>
            ))}
          </select>
          <button type="submit" disabled={!pick || added.fetching}>
            Add to the conversation
          </button>
        </form>
      )}
      {taking && others.length > 0 && (
        <p className="muted">
          They read everything said here, except the agent’s replies made for one participant alone
          before they came in.
        </p>
      )}
      <ErrorNote error={added.error} />
      {taking && me !== startedBy && (
        <p>
          <button type="button" className="danger" onClick={() => void leaveIt()}>
            Leave this conversation
          </button>
        </p>
      )}
      <ErrorNote error={left.error} />
    </section>
  );
}
