import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { JobsService } from '../jobs/jobs.service.js';
import { EMBEDDER } from '../llm/embedder.js';
import type { Embedder } from '../llm/embedder.js';
import { AppConfig } from '../config/app-config.js';
import { StorageGuard } from '../database/storage-guard.service.js';
import { LOCAL_EMBEDDER_MODEL_ID, LocalEmbedder } from '../llm/local-embedder.provider.js';
import { cacheFolder, defaultModelsDir, verifiedFiles } from '../llm/model-files.js';
import { SENTENCE_MODELS } from '../llm/sentence-models.js';
import { EmbeddingKind } from './embedding-kinds.js';
import { EmbeddingModelRow, EmbeddingRepository, VectorRow } from './embedding.repository.js';

export interface SearchModel {
  model: string;
  dimensions: number;
}

export interface QueryVector extends SearchModel {
  vector: number[];
}

export interface EmbeddedTexts {
  model: string;
  vectors: number[][];
}

/** Embeddings of the items [from, to) out of a batch embedded together (one item by default). */
export function sliceEmbedded(
  embedded: EmbeddedTexts[],
  from: number,
  to = from + 1,
): EmbeddedTexts[] {
  return embedded.map((e) => ({ model: e.model, vectors: e.vectors.slice(from, to) }));
}

export const REEMBED_JOB = 'embeddings:reembed';
const SWEEP_BATCH = 128;

/**
 * Vectors for everything searchable, and the switch between embedding models.
 * Writes embed with the configured model. Search uses the ACTIVE model; when the configured
 * model differs, it is BUILDING: a job fills its vectors in the background while search keeps
 * using the old ones, then activates it. Search never mixes models. If the model is down, text
 * is stored without a vector and the sweeper embeds it later.
 */
@Injectable()
export class EmbeddingService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Embeddings');
  private readonly kinds = new Map<string, EmbeddingKind>();
  private active: EmbeddingModelRow | null = null;
  /** Local encoders of models other than the configured one (the active one, mid-switch). */
  private readonly others = new Map<string, Promise<Embedder | null>>();

  constructor(
    private readonly repo: EmbeddingRepository,
    @Inject(EMBEDDER) private readonly embedder: Embedder,
    private readonly jobs: JobsService,
    private readonly config: AppConfig,
    private readonly storage: StorageGuard,
  ) {}

  registerKind(kind: EmbeddingKind): void {
    this.kinds.set(kind.kind, kind);
  }

  async onApplicationBootstrap(): Promise<void> {
    // Search reads the ACTIVE model's vectors meanwhile (without its index, more slowly).
    await this.storage.whenWritable('the embedding models and their indexes', () =>
      this.reconcile(),
    );
  }

  /** Brings the model table in line with the configured embedder. */
  async reconcile(): Promise<void> {
    const configured = this.embedder.modelId;
    const rows = await this.repo.models();
    const active = rows.find((r) => r.state === 'ACTIVE');
    if (!active) {
      await this.repo.registerModel(configured, this.embedder.dimensions, 'ACTIVE');
    } else if (active.model !== configured) {
      const known = rows.find((r) => r.model === configured);
      if (!known || known.state !== 'BUILDING') {
        await this.repo.registerModel(configured, this.embedder.dimensions, 'BUILDING');
      }
      await this.jobs.enqueue(REEMBED_JOB, configured, { model: configured });
      this.logger.log({ msg: 're-embedding started', from: active.model, to: configured });
    }
    for (const kind of this.kinds.keys()) {
      await this.repo.ensureIndex(configured, this.embedder.dimensions, kind);
    }
    this.active = (await this.repo.models()).find((r) => r.state === 'ACTIVE') ?? null;
  }

  /** The model search uses now. */
  async searchModel(): Promise<SearchModel> {
    if (!this.active) this.active = (await this.repo.models()).find((r) => r.state === 'ACTIVE')!;
    return { model: this.active.model, dimensions: this.active.dimensions };
  }

  get writeModel(): string {
    return this.embedder.modelId;
  }

  /**
   * The embedder for a model id, if this process can run it: the configured one, USE-lite, or a
   * fetched local model whose files are in the cache. Search keeps its vectors while a switch
   * away from it fills the new model's.
   */
  private embedderFor(model: string): Promise<Embedder | null> {
    if (model === this.embedder.modelId) return Promise.resolve(this.embedder);
    let other = this.others.get(model);
    if (!other) {
      other = this.localEmbedder(model);
      this.others.set(model, other);
    }
    return other;
  }

  private async localEmbedder(model: string): Promise<Embedder | null> {
    if (model === LOCAL_EMBEDDER_MODEL_ID) return new LocalEmbedder();
    const spec = Object.values(SENTENCE_MODELS).find((m) => m.modelId === model);
    if (!spec) return null;
    const env = this.config.env;
    const paths = await verifiedFiles(
      cacheFolder(env.MODELS_DIR ?? defaultModelsDir(), spec),
      spec,
    );
    return paths
      ? new LocalEmbedder({ onnx: { model: spec, paths, threads: env.EMBEDDINGS_THREADS } })
      : null;
  }

  /** Closes the other models' workers (the configured one is closed by its module). */
  async onApplicationShutdown(): Promise<void> {
    for (const other of this.others.values()) await (await other)?.close?.();
    this.others.clear();
  }

  /** A query vector in the active model, or null when it cannot be made (lexical search only). */
  async embedQuery(text: string): Promise<QueryVector | null> {
    const model = await this.searchModel();
    const embedder = await this.embedderFor(model.model);
    if (!embedder) return null;
    try {
      const [vector] = await embedder.embed([text], 'query');
      return { ...model, vector };
    } catch (err) {
      this.logger.warn({ msg: 'query embedding failed', error: (err as Error).message });
      return null;
    }
  }

  /** Texts embedded with the active model (for similarity checks), or null if unavailable. */
  async embedForComparison(texts: string[]): Promise<EmbeddedTexts | null> {
    const model = await this.searchModel();
    const embedder = await this.embedderFor(model.model);
    if (!embedder || texts.length === 0) return null;
    try {
      return { model: model.model, vectors: await embedder.embed(texts) };
    } catch (err) {
      this.logger.warn({ msg: 'embedding failed', error: (err as Error).message });
      return null;
    }
  }

  /**
   * Embeds texts for storage with every model that needs them (the configured one, and the
   * active one while a switch is under way). Call outside transactions, then pass the result
   * to `store` inside one. A model that is down yields no vectors: the sweeper fills them later.
   */
  async embedForStorage(texts: string[]): Promise<EmbeddedTexts[]> {
    if (texts.length === 0) return [];
    const models = new Set([this.embedder.modelId, (await this.searchModel()).model]);
    const out: EmbeddedTexts[] = [];
    for (const model of models) {
      const embedder = await this.embedderFor(model);
      if (!embedder) continue;
      try {
        out.push({ model, vectors: await embedder.embed(texts) });
      } catch (err) {
        this.logger.warn({ msg: 'embedding deferred', model, error: (err as Error).message });
      }
    }
    return out;
  }

  /** Stores vectors made by `embedForStorage` for items in the same order as its texts. */
  async store(
    kind: string,
    items: { id: string; legacyId?: string | null; userId?: string | null }[],
    embedded: EmbeddedTexts[],
    manager?: EntityManager,
  ): Promise<void> {
    for (const { model, vectors } of embedded) {
      const rows: VectorRow[] = items.map((item, i) => ({
        itemId: item.id,
        vector: vectors[i],
        legacyId: item.legacyId,
        userId: item.userId,
      }));
      await this.repo.upsert(kind, model, rows, manager);
    }
  }

  /** Embeds and stores in one go, outside any transaction. */
  async embedAndStore(
    kind: string,
    items: { id: string; text: string; legacyId?: string | null; userId?: string | null }[],
  ): Promise<void> {
    const embedded = await this.embedForStorage(items.map((i) => i.text));
    await this.store(kind, items, embedded);
  }

  /**
   * Embeds rows that lack a vector for the configured model (and the active one, when this
   * process can run it). Returns how many vectors were written; stops at the first failure.
   */
  async sweep(maxBatches = 50): Promise<number> {
    const models = [this.embedder.modelId];
    const active = (await this.searchModel()).model;
    if (active !== this.embedder.modelId && (await this.embedderFor(active))) models.push(active);
    let written = 0;
    for (const model of models) {
      const embedder = (await this.embedderFor(model))!;
      for (const kind of this.kinds.values()) {
        for (let batch = 0; batch < maxBatches; batch++) {
          const rows = await this.repo.missing(kind, model, SWEEP_BATCH);
          if (rows.length === 0) break;
          let vectors: number[][];
          try {
            vectors = await embedder.embed(rows.map((r) => r.text));
          } catch (err) {
            this.logger.warn({ msg: 'sweep stopped', model, error: (err as Error).message });
            return written;
          }
          await this.repo.upsert(
            kind.kind,
            model,
            rows.map((r, i) => ({
              itemId: r.id,
              vector: vectors[i],
              legacyId: r.legacyId,
              userId: r.userId,
            })),
          );
          written += rows.length;
          if (rows.length < SWEEP_BATCH) break;
        }
      }
    }
    return written;
  }

  /** The REEMBED_JOB handler: fill the configured model, then switch search over to it. */
  async reembed(): Promise<void> {
    const target = this.embedder.modelId;
    const rows = await this.repo.models();
    const previous = rows.find((r) => r.state === 'ACTIVE');
    if (!previous || previous.model === target) return;
    await this.sweep(Number.MAX_SAFE_INTEGER);
    for (const kind of this.kinds.values()) {
      const { total, embedded } = await this.repo.counts(kind, target);
      if (embedded < total) {
        throw new Error(`re-embedding incomplete for ${kind.kind}: ${embedded}/${total}`);
      }
    }
    await this.repo.activate(target);
    this.active = null;
    for (const kind of this.kinds.keys()) await this.repo.dropIndex(previous.model, kind);
    await this.repo.deleteModel(previous.model);
    this.logger.log({ msg: 're-embedding finished', from: previous.model, to: target });
  }

  async status() {
    const models = await this.repo.models();
    const configured = this.embedder.modelId;
    const kinds = [];
    for (const kind of this.kinds.values()) {
      const { total, embedded } = await this.repo.counts(kind, configured);
      kinds.push({ kind: kind.kind, total, embedded, missing: total - embedded });
    }
    const active = models.find((m) => m.state === 'ACTIVE');
    return {
      activeModel: active?.model ?? null,
      configuredModel: configured,
      dimensions: this.embedder.dimensions,
      reembedding: active !== undefined && active.model !== configured,
      models,
      kinds,
    };
  }
}
