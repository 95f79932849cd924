import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { scoreList } from '../context/context.presenter.js';
import type {
  ContextItem,
  ContextRequest,
  ContextSectionProvider,
  Provenance,
} from '../context/context.types.js';
import type { QueryVector } from '../embeddings/embedding.service.js';
import type { UserEntity } from '../identity/user.entity.js';
import { countTokens } from '../llm/tokenizer.js';
import type { RecallHit } from '../search/models/recall.model.js';
import { recallId } from '../search/recall-id.js';
import type { RecallSource } from '../search/search.service.js';
import { entryKey, keywordScore, parseEntryKey, PROFILE_FIELDS } from './profile-fields.js';
import type { UsableEntry } from './profile.repository.js';
import { ProfilesService } from './profiles.service.js';

export const PROFILE_SOURCE_TYPE = 'PROFILE' as const;
const RECALL_PREFIX = 'profile:';

/** How far the most similar entry must lead the next for its similarity alone to count. */
export const DENSE_MARGIN = 0.1;

/**
 * The entry a question's vector points to, if any: the most similar one, when it is similar
 * enough and clearly ahead of the next. One profile's short sentences all look somewhat alike
 * to an embedding model, so similarity alone says little about any but the clear leader.
 */
export function denseLeader(entries: UsableEntry[], min: number): UsableEntry | null {
  const ranked = entries
    .filter((e) => e.similarity !== null)
    .sort((a, b) => b.similarity! - a.similarity!);
  const [best, next] = ranked;
  if (!best || best.similarity! < min) return null;
  return next && best.similarity! - next.similarity! < DENSE_MARGIN ? null : best;
}

/** How well an entry answers a question: its vector's similarity, or the question naming it. */
export function relevance(query: string, entry: UsableEntry): { dense: number; keyword: number } {
  return {
    dense: Math.max(0, entry.similarity ?? 0),
    keyword: keywordScore(query, entry.field, entry.value),
  };
}

/**
 * The member's own profile in their conversations and recall, only with their consent (the
 * repository reads nothing without it) and only for them: the context is assembled for the
 * conversation's owner, and a platform admin's debug view of it leaves the profile out.
 */
@Injectable()
export class ProfilesContextProvider implements ContextSectionProvider {
  readonly section = 'profile' as const;

  constructor(
    private readonly profiles: ProfilesService,
    private readonly config: AppConfig,
  ) {}

  get maxTokens(): number {
    return this.config.env.PROFILE_CONTEXT_TOKENS;
  }

  /**
   * Every usable entry, the ones that help address the person first (name, pronouns, the
   * relationship to this legacy), raised by their relevance to the message; the section's
   * token cap decides how many fit.
   */
  async collect(request: ContextRequest): Promise<ContextItem[]> {
    if (this.maxTokens === 0) return [];
    if (request.viewer && request.viewer.id !== request.user.id) return [];
    const entries = await this.profiles.usable(
      request.user.id,
      request.legacy.id,
      (await request.queryVector?.()) ?? null,
    );
    return entries.map((entry) => {
      const { dense, keyword } = relevance(request.query, entry);
      const priority = 1 - PROFILE_FIELDS.indexOf(entry.field) / PROFILE_FIELDS.length;
      const score = priority + Math.max(dense, keyword);
      const text = `- ${entry.text}`;
      return {
        sourceType: PROFILE_SOURCE_TYPE,
        id: entryKey(entry.field, entry.legacyId),
        text,
        tokens: countTokens(text),
        score,
        scores: { priority, dense, keyword, final: score },
        provenance: provenance(entry),
      };
    });
  }

  /** Recall: the entries the question is about, before the search's own results. */
  async collectForRecall(
    user: UserEntity,
    legacyId: string,
    query: string,
    queryVector: () => Promise<QueryVector | null>,
  ): Promise<RecallHit[]> {
    // The search's own vector of the question; without consent nothing is read.
    const vector = await queryVector();
    const ranked = await this.profiles.usable(user.id, legacyId, vector);
    if (ranked.length === 0) return [];
    const leader = denseLeader(ranked, this.config.env.PROFILE_RECALL_MIN_SCORE);
    return ranked
      .map((entry) => {
        const { dense, keyword } = relevance(query, entry);
        const score = Math.max(entry === leader ? dense : 0, keyword);
        return { entry, dense, keyword, score };
      })
      .filter((r) => r.score > 0)
      .sort((a, b) => b.score - a.score)
      .map(({ entry, dense, keyword, score }) => {
        const key = entryKey(entry.field, entry.legacyId);
        return {
          item: {
            id: recallId(PROFILE_SOURCE_TYPE, key),
            sourceType: PROFILE_SOURCE_TYPE,
            sourceId: key,
            text: entry.text,
            forgettable: true,
            provenance: provenance(entry),
          },
          score,
          scores: scoreList({ dense, keyword, final: score }),
        };
      });
  }

  /** What `recall` and `forgetRecallItem` ask of this module: ids are `profile:<field>`. */
  asRecallSource(): RecallSource {
    return {
      sourceType: PROFILE_SOURCE_TYPE,
      collect: (user, legacyId, query, _clock, queryVector) =>
        this.collectForRecall(user, legacyId, query, queryVector),
      forget: async (user, key) => {
        await this.profiles.forget(user, key);
        return { forgotten: true };
      },
      parseId: (recallId) => {
        if (!recallId.toLowerCase().startsWith(RECALL_PREFIX)) return null;
        const key = recallId.slice(RECALL_PREFIX.length);
        const parsed = parseEntryKey(key);
        return parsed ? entryKey(parsed.field, parsed.legacyId) : null;
      },
    };
  }
}

function provenance(entry: UsableEntry): Provenance {
  return {
    sourceType: PROFILE_SOURCE_TYPE,
    sourceId: entryKey(entry.field, entry.legacyId),
    conversationId: null,
    messageIds: [],
    messageMetadata: [],
    turnRange: null,
    occurredAt: null,
    createdAt: entry.updatedAt,
  };
}
