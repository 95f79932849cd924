import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { EmbeddingRepository } from '../embeddings/embedding.repository.js';
import { EmbeddedTexts, EmbeddingService, sliceEmbedded } from '../embeddings/embedding.service.js';
import { FactEntity } from './fact.entity.js';
import { FACT_KIND } from './fact.repository.js';

/** Vectors of new facts' texts, made outside the transaction. */
export interface PreparedVectors {
  /** For storage, one entry per model (see EmbeddingService.embedForStorage). */
  embedded: EmbeddedTexts[];
  /** The vectors in the model search uses, for similarity; null when it is unavailable. */
  comparison: { model: string; dimensions: number; vectors: number[][] } | null;
}

/** The vectors of some of the prepared texts, in the order given. */
export function pickPrepared(prepared: PreparedVectors, indexes: number[]): PreparedVectors {
  return {
    embedded: prepared.embedded.map((e) => ({ ...e, vectors: indexes.map((i) => e.vectors[i]) })),
    comparison: prepared.comparison && {
      ...prepared.comparison,
      vectors: indexes.map((i) => prepared.comparison!.vectors[i]),
    },
  };
}

/**
 * Facts' vectors: embedded before the transaction (a model call must not hold locks), stored
 * inside it with the fact they describe.
 */
@Injectable()
export class FactVectorsService {
  constructor(
    private readonly embeddings: EmbeddingService,
    private readonly vectors: EmbeddingRepository,
  ) {}

  /** Embeds fact texts for storage and comparison. Call outside any transaction. */
  async prepare(texts: string[]): Promise<PreparedVectors> {
    if (texts.length === 0) return { embedded: [], comparison: null };
    const embedded = await this.embeddings.embedForStorage(texts);
    const search = await this.embeddings.searchModel();
    const inSearchModel = embedded.find((e) => e.model === search.model);
    return {
      embedded,
      comparison: inSearchModel ? { ...search, vectors: inSearchModel.vectors } : null,
    };
  }

  /** Stores the prepared vector of one fact, in the caller's transaction. */
  async store(
    m: EntityManager,
    fact: FactEntity,
    prepared: PreparedVectors,
    index: number,
  ): Promise<void> {
    const embedded = sliceEmbedded(prepared.embedded, index);
    await this.embeddings.store(
      FACT_KIND,
      [{ id: fact.id, legacyId: fact.legacyId, userId: fact.authorId }],
      embedded,
      m,
    );
  }

  /** The vector of a fact whose text changed, prepared from its one new text. */
  async replace(m: EntityManager, fact: FactEntity, prepared: PreparedVectors): Promise<void> {
    // The old vector describes the old text: drop it; the sweeper fills any gap.
    await this.vectors.deleteItems(FACT_KIND, [fact.id], m);
    await this.store(m, fact, prepared, 0);
  }
}
