import { createHash } from 'node:crypto';
import { Injectable, Logger, OnApplicationShutdown, OnModuleInit, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ScheduledTasksService } from '../jobs/scheduled-tasks.service.js';
import { EventBus } from '../pubsub/event-bus.js';
import { RevokedTokenRepository } from './revoked-token.repository.js';

/** Published (through the database on a server) when a session signs out: every instance hears. */
export const SESSION_REVOKED_TOPIC = 'sessions:revoked';

interface SessionRevoked {
  tokenHash: string;
}

/** What identifies a token in `revoked_tokens` and in the sockets' registry: never the token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** How long a token found not revoked is trusted without asking the database again. */
const TRUST_NOT_REVOKED_MS = 30_000;
/** Tokens remembered per instance; the oldest are forgotten first (asked again when seen). */
const MAX_REMEMBERED = 10_000;

/**
 * Signed-out sessions, kept in the database (`revoked_tokens`) so that every instance refuses
 * their tokens. Each request's check costs a hash and a map lookup: a token is asked of the
 * database when first seen and again after TRUST_NOT_REVOKED_MS; a sign-out reaches every
 * instance's map at once through the event bus (NOTIFY on a server), and when the bus says
 * events were lost (its LISTEN connection dropped) the map is emptied. The entry expires with
 * the token, when a scheduled task deletes it.
 */
@Injectable()
export class SessionRevocations implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Sessions');
  private readonly known = new Map<string, { revoked: boolean; checkedAt: number }>();
  private readonly listeners = new Set<(hash: string) => void>();
  private feed: AsyncIterableIterator<SessionRevoked> | null = null;
  private stopInterrupted: (() => void) | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: RevokedTokenRepository,
    private readonly bus: EventBus,
    @Optional() private readonly tasks?: ScheduledTasksService,
  ) {}

  onModuleInit(): void {
    const feed = this.bus.subscribe<SessionRevoked>(SESSION_REVOKED_TOPIC);
    this.feed = feed;
    void (async () => {
      for (;;) {
        const next = await feed.next().catch(() => ({ done: true as const, value: undefined }));
        if (next.done) return;
        this.signedOut(next.value.tokenHash);
      }
    })();
    this.stopInterrupted = this.bus.onInterrupted(() => this.known.clear());
    this.tasks?.register('revoked-tokens-prune', '23 * * * *', async () => {
      const pruned = await this.repo.pruneExpired();
      if (pruned > 0) this.logger.log({ msg: 'expired revocations deleted', count: pruned });
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopInterrupted?.();
    await this.feed?.return?.();
  }

  /**
   * Revokes a token until it expires: stored, then announced to every instance (whose open
   * sockets of that session close). Idempotent.
   */
  async revoke(token: string, expiresAt: Date): Promise<void> {
    const hash = tokenHash(token);
    const deliver = await this.dataSource.transaction(async (m) => {
      await this.repo.add(m, hash, expiresAt);
      return this.bus.publishWith<SessionRevoked>(m, SESSION_REVOKED_TOPIC, { tokenHash: hash });
    });
    this.remember(hash, true);
    await deliver().catch((err: Error) =>
      // Stored: other instances still refuse it once their trust in it runs out.
      this.logger.warn({ msg: 'sign-out not published', error: err.message }),
    );
  }

  async isRevoked(token: string): Promise<boolean> {
    const hash = tokenHash(token);
    const seen = this.known.get(hash);
    if (seen && (seen.revoked || Date.now() - seen.checkedAt < TRUST_NOT_REVOKED_MS)) {
      return seen.revoked;
    }
    const revoked = await this.repo.isRevoked(hash);
    this.remember(hash, revoked);
    return revoked;
  }

  /** Calls `listener` with the hash of every token signed out from now on, on any instance. */
  onSignedOut(listener: (hash: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private signedOut(hash: string): void {
    this.remember(hash, true);
    for (const listener of this.listeners) listener(hash);
  }

  /** A revocation is never forgotten for a later "not revoked" read that raced it. */
  private remember(hash: string, revoked: boolean): void {
    const was = this.known.get(hash);
    this.known.delete(hash);
    if (this.known.size >= MAX_REMEMBERED) {
      this.known.delete(this.known.keys().next().value!);
    }
    this.known.set(hash, { revoked: revoked || was?.revoked === true, checkedAt: Date.now() });
  }
}
