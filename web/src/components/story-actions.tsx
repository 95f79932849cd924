import { useState } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../gql';
import type { LegacyRole, StoryVisibility } from '../gql/graphql';
import { ErrorNote } from './status';

const SetStoryVisibility = graphql(`
  mutation SetStoryVisibility($id: ID!, $visibility: StoryVisibility!) {
    setStoryVisibility(id: $id, visibility: $visibility) {
      id
      visibility
    }
  }
`);

const DeleteStory = graphql(`
  mutation DeleteStory($id: ID!) {
    deleteStory(id: $id)
  }
`);

export interface StoryForActions {
  id: string;
  title: string;
  visibility: StoryVisibility;
  authorId: string;
  /** What deleting it removes, in the API's words (forgetRecallItem says the same). */
  wouldDelete: string;
}

/**
 * Share or take back, and delete (after saying what goes): the author's own story, or, for an
 * owner or admin, a story another member shared (moderation, as for facts).
 */
export function StoryActions({
  story,
  me,
  role,
  onDone,
}: {
  story: StoryForActions;
  me: string;
  role: LegacyRole;
  onDone: (message: string, deleted: boolean) => void;
}) {
  const [visibility, setVisibility] = useMutation(SetStoryVisibility);
  const [deleted, deleteStory] = useMutation(DeleteStory);
  const [confirming, setConfirming] = useState(false);
  const mine = story.authorId === me;
  const moderates = !mine && story.visibility === 'SHARED' && role !== 'MEMBER';
  if (!mine && !moderates) return null;
  const shared = story.visibility === 'SHARED';

  async function toggle() {
    const next = shared ? 'PRIVATE' : 'SHARED';
    const result = await setVisibility({ id: story.id, visibility: next });
    if (result.data)
      onDone(shared ? `“${story.title}” is private again.` : `“${story.title}” is shared.`, false);
  }

  async function remove() {
    const result = await deleteStory({ id: story.id });
    setConfirming(false);
    if (result.data) onDone(`“${story.title}” was deleted.`, true);
  }

  return (
    <div className="story-actions">
      <span className="actions">
        <button type="button" onClick={() => void toggle()} disabled={visibility.fetching}>
          {mine ? (shared ? 'Take back' : 'Share') : 'Make private'}
          <span className="sr-only"> “{story.title}”</span>
        </button>
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          Delete<span className="sr-only"> “{story.title}”</span>
        </button>
      </span>
      {confirming && (
        <div className="notice" role="alertdialog" aria-label={`Delete “${story.title}”?`}>
          <p>Deleting removes, at once and for good: {story.wouldDelete}</p>
          <p className="actions">
            <button type="button" className="danger" onClick={() => void remove()}>
              Delete for good
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </p>
        </div>
      )}
      <ErrorNote error={visibility.error ?? deleted.error} />
    </div>
  );
}
