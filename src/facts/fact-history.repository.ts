import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { supersessionVisibleSql, visibleSql } from './fact-visibility.js';
import { FactEntity, FactHistoryEntity } from './fact.entity.js';
import { FactAction, FactVisibility } from './fact.enums.js';
import { raw, run, sql } from '../database/sql.js';

const historyColumns = (h: string) =>
  raw(`${h}.id, ${h}.fact_id AS "factId", ${h}.action,
  ${h}.actor_id AS "actorId", ${h}.content, ${h}.category, ${h}.visibility, ${h}.status,
  ${h}.mention_count AS "mentionCount", ${h}.shared_mention_count AS "sharedMentionCount",
  ${h}.related_fact_id AS "relatedFactId", ${h}.conversation_id AS "conversationId", ${h}.detail,
  ${h}.created_at AS "createdAt"`);

export interface HistoryExtra {
  actorId?: string | null;
  relatedFactId?: string | null;
  conversationId?: string | null;
  detail?: string | null;
  /** Recorded as private whatever the fact's visibility: a change the family never saw. */
  privateEntry?: boolean;
}

/** A history entry with what fact-visibility.ts needs to show it to another member. */
export type HistoryRow = FactHistoryEntity & {
  relatedVisible: boolean;
  supersessionVisible: boolean;
};

/** `fact_history`: each fact as it stood after each change. */
@Injectable()
export class FactHistoryRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Records `fact` as it stands now. */
  async add(
    manager: EntityManager,
    fact: FactEntity,
    action: FactAction,
    extra: HistoryExtra = {},
  ): Promise<void> {
    await run(
      manager,
      sql`INSERT INTO fact_history (fact_id, action, actor_id, content, category, visibility, status,
                                 mention_count, related_fact_id, conversation_id, detail,
                                 shared_mention_count)
       VALUES (${fact.id}, ${action}, ${extra.actorId ?? null}, ${fact.content}, ${fact.category},
         ${extra.privateEntry ? FactVisibility.PRIVATE : fact.visibility}, ${fact.status},
         ${fact.mentionCount}, ${extra.relatedFactId ?? null}, ${extra.conversationId ?? null},
         ${extra.detail ?? null}, ${fact.sharedMentionCount})`,
    );
  }

  /**
   * A fact's entries, oldest first, each with whether `viewerId` may see its related fact and
   * the fact's supersession (what fact-visibility.ts decides other members see of it).
   */
  forViewer(factId: string, viewerId: string): Promise<HistoryRow[]> {
    return run(
      this.dataSource.manager,
      sql`SELECT ${historyColumns('h')},
              COALESCE((SELECT ${visibleSql('r', viewerId)} FROM facts r WHERE r.id = h.related_fact_id),
                       false) AS "relatedVisible",
              (SELECT ${supersessionVisibleSql('f', viewerId)} FROM facts f WHERE f.id = h.fact_id)
                AS "supersessionVisible"
         FROM fact_history h
        WHERE h.fact_id = ${factId}
        ORDER BY h.created_at, h.id`,
    );
  }

  /**
   * Before a fact is purged: entries about it stay in the other fact's history for its author
   * only, without its words.
   */
  async redactRelated(manager: EntityManager, factId: string): Promise<void> {
    await run(
      manager,
      sql`UPDATE fact_history
          SET detail = CASE WHEN detail IS NULL THEN NULL
                            ELSE 'Related to a fact that has since been deleted.' END,
              visibility = 'PRIVATE'
        WHERE related_fact_id = ${factId}`,
    );
  }
}
