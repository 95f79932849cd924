import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { EmbeddingService, sliceEmbedded } from '../embeddings/embedding.service.js';
import type { EmbeddedTexts } from '../embeddings/embedding.service.js';
import { JobsService } from '../jobs/jobs.service.js';
import { StorageGuard } from '../database/storage-guard.service.js';
import { chunkMessage } from './chunker.js';
import { writtenByAgent } from './fusion.js';
import { toldPeriod } from './told-period.js';
import { KINDS_VERSION, WordKinds, wordKinds } from './word-kinds.js';
import {
  NewSegment,
  PendingMessage,
  SegmentRepository,
  segmentEmbedText,
} from './segment.repository.js';

export const SEGMENT_KIND = 'segment';
export const INDEX_JOB = 'search:index-conversation';
export const BACKFILL_JOB = 'search:backfill';
export const TOLD_JOB = 'search:told-times';
export const KINDS_JOB = 'search:word-kinds';

/** Turns per indexing batch: one embedding call and one transaction each. */
const BATCH = 128;
/**
 * Segments written per transaction (whole turns, so a turn is never left half indexed): a batch
 * of long turns is hundreds of vectors, which the embedded database would write in one stall.
 */
const WRITE_SEGMENTS = 32;
/** Segments whose told period is read per statement by the TOLD_JOB. */
const TOLD_BATCH = 500;
/** Segments whose kinds are read per statement by the KINDS_JOB. */
const KINDS_BATCH = 200;
/** The preceding turn's words kept as a segment's context. */
const CONTEXT_CHARS = 400;

function text(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.replace(/\s+/g, ' ').trim();
  return trimmed.length === 0 ? null : trimmed.slice(0, max);
}

/** A speaker name given with an imported turn (`metadata.speaker`). */
export function speakerOf(metadata: Record<string, unknown> | null | undefined): string | null {
  return text(metadata?.speaker, 100);
}

/** A description of a photo shared in the turn (`metadata.image_caption` or `caption`). */
export function captionOf(metadata: Record<string, unknown> | null | undefined): string | null {
  return text(metadata?.image_caption ?? metadata?.caption, 1000);
}

/** The end of a text, from a word boundary. */
function tail(value: string, max: number): string {
  const flat = value.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(flat.length - max);
  const space = cut.indexOf(' ');
  return space > 0 && space < max / 4 ? cut.slice(space + 1) : cut;
}

/**
 * Keeps `message_segments` in step with the conversation log: every stored turn (live or
 * imported) enqueues an indexing job for its conversation in the turn's own transaction; the
 * job chunks every turn that has no segments yet, embeds the chunks outside any transaction and
 * stores segments, vectors and full-text statistics together. Running it twice changes nothing.
 */
@Injectable()
export class SegmentIndexerService implements OnApplicationBootstrap {
  private readonly logger = new Logger('SearchIndex');

  constructor(
    private readonly dataSource: DataSource,
    private readonly segments: SegmentRepository,
    private readonly embeddings: EmbeddingService,
    private readonly jobs: JobsService,
    private readonly config: AppConfig,
    private readonly storage: StorageGuard,
  ) {}

  /** Indexes (and embeds) the conversation's turns not yet indexed: the INDEX_JOB handler. */
  async indexJob({ conversationId }: { conversationId: string }): Promise<void> {
    await this.indexConversation(conversationId);
  }

  /** After a turn is stored, in its transaction: its conversation's indexing job. */
  async enqueueIndexing(conversationId: string, manager: EntityManager): Promise<void> {
    await this.jobs.enqueue(INDEX_JOB, conversationId, { conversationId }, { manager });
  }

  /** Turns stored before search existed (or while it was off) are indexed in the background. */
  async onApplicationBootstrap(): Promise<void> {
    await this.storage.whenWritable('the search index backfills', async () => {
      await this.jobs.enqueue(BACKFILL_JOB, 'startup', {});
      await this.jobs.enqueue(TOLD_JOB, 'startup', {});
      await this.jobs.enqueue(KINDS_JOB, 'startup', {});
    });
  }

  /**
   * The kinds of what a chunk names: none for code, whose nouns are identifiers, nor for the
   * agent's replies, which explain in general words what the member told in particular ones
   * (kinds there only widen what a long reply matches).
   */
  private kindsOf(
    kinds: WordKinds,
    chunk: { text: string; isCode: boolean; role: string; speaker: string | null },
    caption: string | null,
  ): string | null {
    if (chunk.isCode || writtenByAgent(chunk.role, chunk.speaker)) return null;
    return kinds.kindsOf(caption !== null ? `${chunk.text}\n${caption}` : chunk.text);
  }

  /**
   * The KINDS_JOB handler: reads the kinds of what each segment names where they were never
   * read (stored before kinds existed, or while they were off or WordNet could not be read) or
   * were read by older rules. Segments it has read carry KINDS_VERSION, so a second run finds
   * nothing to do.
   */
  async readKinds(): Promise<number> {
    let read = 0;
    if (!this.config.env.SEARCH_KINDS) return read;
    for (;;) {
      const pending = await this.segments.kindsPending(KINDS_BATCH, KINDS_VERSION);
      if (pending.length === 0) return read;
      // Read only when there is something to read: the job runs at every start.
      const taxonomy = await wordKinds();
      await this.segments.setKinds(
        pending.map((s) => ({
          id: s.id,
          kinds: this.kindsOf(
            taxonomy,
            { text: s.content, isCode: s.isCode, role: s.role, speaker: s.speaker },
            s.caption,
          ),
        })),
        KINDS_VERSION,
      );
      read += pending.length;
      await yieldToLoop();
    }
  }

  /**
   * The TOLD_JOB handler: reads the period each segment stored before told periods existed
   * tells of. Segments it has read are marked, so a second run finds nothing to do.
   */
  async readToldPeriods(): Promise<number> {
    let read = 0;
    for (;;) {
      const pending = await this.segments.toldPending(TOLD_BATCH);
      if (pending.length === 0) return read;
      await this.segments.setTold(
        pending.map((s) => {
          const told = toldPeriod(s.content, s.occurredAt, s.timezone);
          return { id: s.id, from: told?.from ?? null, to: told?.to ?? null };
        }),
      );
      read += pending.length;
      // Each batch is its own statement: the event loop is free in between.
      await yieldToLoop();
    }
  }

  /** The BACKFILL_JOB handler. */
  async backfill(): Promise<void> {
    for (const { id } of await this.segments.conversationsWithPending(10_000)) {
      await this.jobs.enqueue(INDEX_JOB, id, { conversationId: id });
    }
  }

  /** Indexes every turn of the conversation that has no segments. Returns segments written. */
  async indexConversation(conversationId: string): Promise<number> {
    let written = 0;
    for (;;) {
      const pending = await this.segments.pendingMessages(conversationId, BATCH);
      if (pending.length === 0) return written;
      written += await this.indexBatch(pending);
      if (pending.length < BATCH) return written;
    }
  }

  private async indexBatch(pending: PendingMessage[]): Promise<number> {
    // Kinds add to a turn's words; without WordNet the turn is indexed and read later.
    const kinds = !this.config.env.SEARCH_KINDS
      ? null
      : await wordKinds().catch((err: unknown) => {
          this.logger.warn({ msg: 'word kinds unavailable', error: (err as Error).message });
          return null;
        });
    const rows = pending.flatMap((m) => this.segmentsOf(m, kinds));
    // Embedded before the transaction; if the model is down the rows are stored without
    // vectors and the embeddings sweeper fills them later.
    const embedded = await this.embeddings.embedForStorage(rows.map((r) => segmentEmbedText(r)));
    let written = 0;
    for (const [from, to] of writeGroups(rows, WRITE_SEGMENTS)) {
      written += await this.write(rows.slice(from, to), sliceEmbedded(embedded, from, to));
      // The embedded database writes vectors and their index on this thread: let it breathe.
      if (to < rows.length) await yieldToLoop();
    }
    return written;
  }

  /** Whole turns' segments, their vectors and full-text statistics, in one transaction. */
  private write(rows: NewSegment[], embedded: EmbeddedTexts[]): Promise<number> {
    return this.dataSource.transaction(async (m) => {
      const inserted = await this.segments.insert(m, rows);
      if (inserted.length === 0) return 0;
      const index = new Map(rows.map((r, i) => [`${r.messageId}:${r.position}`, i]));
      const positions = inserted.map((s) => index.get(`${s.messageId}:${s.position}`)!);
      await this.embeddings.store(
        SEGMENT_KIND,
        inserted.map((s, k) => ({
          id: s.id,
          legacyId: rows[positions[k]].legacyId,
          userId: rows[positions[k]].userId,
        })),
        embedded.map((e) => ({ model: e.model, vectors: positions.map((i) => e.vectors[i]) })),
        m,
      );
      await this.segments.addToStats(
        m,
        inserted.map((s) => s.id),
      );
      return inserted.length;
    });
  }

  /** The segments of one turn: its chunks, each with the text it follows as context. */
  segmentsOf(message: PendingMessage, kinds: WordKinds | null): NewSegment[] {
    const chunks = chunkMessage(message.content, {
      maxTokens: this.config.env.SEARCH_CHUNK_TOKENS,
      chunking: this.config.env.SEARCH_CHUNKING,
    });
    const speaker = speakerOf(message.metadata);
    const previousSpeaker = speakerOf(message.previousMetadata);
    const previous =
      message.previousContent !== null
        ? `${previousSpeaker !== null ? `${previousSpeaker}: ` : ''}${tail(message.previousContent, CONTEXT_CHARS)}`
        : null;
    const caption = captionOf(message.metadata);
    return chunks.map((chunk, i) => {
      const told = toldPeriod(chunk.text, message.occurredAt, message.timezone);
      return {
        messageId: message.id,
        conversationId: message.conversationId,
        legacyId: message.legacyId,
        userId: message.userId,
        turnIndex: message.turnIndex,
        position: chunk.position,
        role: message.role,
        speaker,
        caption: i === 0 ? caption : null,
        context: i === 0 ? previous : tail(chunks[i - 1].text, CONTEXT_CHARS),
        content: chunk.text,
        isCode: chunk.isCode,
        language: chunk.language,
        charStart: chunk.start,
        charEnd: chunk.end,
        tokenCount: chunk.tokens,
        occurredAt: message.occurredAt,
        toldFrom: told?.from ?? null,
        toldTo: told?.to ?? null,
        kinds:
          kinds &&
          this.kindsOf(kinds, { ...chunk, role: message.role, speaker }, i === 0 ? caption : null),
        kindsVersion: kinds !== null ? KINDS_VERSION : null,
      };
    });
  }
}

/**
 * [from, to) ranges of `rows` holding whole turns (a turn's segments are adjacent), each of
 * about `size` segments; a turn with more segments than that is a range of its own.
 */
export function writeGroups(rows: { messageId: string }[], size: number): [number, number][] {
  const groups: [number, number][] = [];
  let start = 0;
  for (let i = 1; i <= rows.length; i++) {
    const turnEnds = i === rows.length || rows[i].messageId !== rows[i - 1].messageId;
    if (turnEnds && (i - start >= size || i === rows.length)) {
      groups.push([start, i]);
      start = i;
    }
  }
  return groups;
}
