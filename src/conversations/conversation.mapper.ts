import type { ConversationView } from './conversation-access.service.js';
import type { ParticipantRow } from './conversation-participant.repository.js';
import type { ConversationModel } from './models/conversation.model.js';

/** What the resolvers carry beside the GraphQL fields: the viewer's participation. */
export type ConversationModelWithViewer = ConversationModel & {
  /** When the viewer left (null while they take part): nothing after it is shown to them. */
  viewerLeftAt: Date | null;
};

/** The conversation as its viewer sees it: their switch, and nothing after they left. */
export function toConversationModel(view: ConversationView): ConversationModelWithViewer {
  const until = view.viewer.leftAtTurn;
  return {
    id: view.id,
    legacyId: view.legacyId,
    title: view.title,
    remember: view.viewer.remember,
    startedBy: view.userId,
    readableUntilTurn: until,
    messageCount: until === null ? view.nextTurnIndex : Math.min(until, view.nextTurnIndex),
    lastActivityAt:
      view.viewer.leftAt && view.viewer.leftAt < view.lastActivityAt
        ? view.viewer.leftAt
        : view.lastActivityAt,
    createdAt: view.createdAt,
    viewerLeftAt: view.viewer.leftAt,
  };
}

/**
 * Who takes part, as a viewer sees it: for one who left (`viewerLeftAt`), the participants as
 * they stood then.
 */
export function participantsAsSeen(
  rows: ParticipantRow[],
  viewerLeftAt: Date | null,
): ParticipantRow[] {
  if (!viewerLeftAt) return rows;
  return rows
    .filter((r) => r.joinedAt <= viewerLeftAt)
    .map((r) => (r.leftAt && r.leftAt > viewerLeftAt ? { ...r, leftAt: null } : r));
}
