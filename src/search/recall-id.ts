import type { ContextSourceType } from '../context/context.types.js';

/**
 * A recall id: the source type and its id, so that forgetting knows where to go (a profile
 * entry's is `profile:<key>`). The one id scheme of remembered items: RecallItem.id, and the
 * `recallItemId` of context items, reply references and retrieval candidates.
 */
export function recallId(sourceType: ContextSourceType | string, id: string): string {
  return sourceType === 'PROFILE' ? `profile:${id}` : `${sourceType}:${id}`;
}

export function parseRecallId(value: string): { sourceType: string; id: string } | null {
  const m =
    /^(FACT|MEMORY|PERIOD_SUMMARY|STORY|SUMMARY|TURN):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i.exec(
      value.trim(),
    );
  return m ? { sourceType: m[1].toUpperCase(), id: m[2].toLowerCase() } : null;
}
