import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Vectors live apart from the rows they describe, one row per (item, model), so a new model can
 * be filled in beside the old one and search switches over only when it is complete. HNSW
 * indexes are partial, per model and kind, and created at run time for whichever model is
 * configured (see EmbeddingIndexes): their dimension is only known then.
 */
export class Embeddings1763800200000 implements MigrationInterface {
  name = 'Embeddings1763800200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE embedding_models (
        model text PRIMARY KEY,
        dimensions integer NOT NULL CHECK (dimensions > 0),
        state text NOT NULL CHECK (state IN ('ACTIVE', 'BUILDING', 'RETIRED')),
        created_at timestamptz NOT NULL DEFAULT now(),
        activated_at timestamptz
      )`);
    await q.query(
      `CREATE UNIQUE INDEX embedding_models_one_active ON embedding_models ((state)) WHERE state = 'ACTIVE'`,
    );
    await q.query(`
      CREATE TABLE embeddings (
        kind text NOT NULL,
        item_id uuid NOT NULL,
        model text NOT NULL,
        embedding vector NOT NULL,
        legacy_id uuid REFERENCES legacies(id) ON DELETE CASCADE,
        user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (kind, item_id, model)
      )`);
    await q.query(`CREATE INDEX embeddings_model_kind_idx ON embeddings (model, kind)`);
    // Item tables call this from an AFTER DELETE trigger, so deleting a row deletes its vectors.
    await q.query(`
      CREATE FUNCTION embeddings_forget_item() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM embeddings WHERE kind = TG_ARGV[0] AND item_id = OLD.id;
        RETURN OLD;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION embeddings_forget_item CASCADE`);
    await q.query(`DROP TABLE embeddings`);
    await q.query(`DROP TABLE embedding_models`);
  }
}
