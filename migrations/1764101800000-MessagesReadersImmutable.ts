import { MigrationInterface, QueryRunner } from 'typeorm';
import { FOUNDATION_COLUMNS, messagesGuard } from './1764100100000-PlaceholderTurns.js';

const PLACEHOLDER_GUARD = [...FOUNDATION_COLUMNS, 'placeholder'];

/**
 * Who said a turn (or whom a reply answered), in which legacy, and whether a reply was made for
 * its participant alone decide who reads it: part of the immutable log, like its content. A
 * reply unmarked as answered alone would show another participant what only one may see.
 */
export class MessagesReadersImmutable1764101800000 implements MigrationInterface {
  name = 'MessagesReadersImmutable1764101800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(messagesGuard([...PLACEHOLDER_GUARD, 'user_id', 'legacy_id', 'answered_alone']));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(messagesGuard(PLACEHOLDER_GUARD));
  }
}
