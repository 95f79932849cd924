import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Vectors stored in the row, not in TOAST. pgvector's type defaults to out-of-line storage, so
 * every exact distance (the current conversation's turns, the memory block, facts, scores for
 * other paths' candidates) fetched each vector from the TOAST table: 27 ms for a conversation of
 * 1,000 turns on a server, 4 ms inline. MAIN keeps a vector in its row while the row fits a page
 * (up to about 2,000 dimensions) and moves larger ones out as before. The USING expression
 * rewrites the rows already stored (and rebuilds the HNSW indexes: on a large table this
 * migration takes as long as building them).
 */
export class InlineVectors1764000500000 implements MigrationInterface {
  name = 'InlineVectors1764000500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE embeddings ALTER COLUMN embedding TYPE vector USING (embedding::real[])::vector,
                              ALTER COLUMN embedding SET STORAGE MAIN`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE embeddings ALTER COLUMN embedding SET STORAGE EXTERNAL`);
  }
}
