import { Logger } from '@nestjs/common';
import pg from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import type { ServerLocator } from '../database/server-locator.js';
import { Queryable, run, sql } from '../database/sql.js';

/**
 * The database side of the PostgreSQL event bus: NOTIFY, LISTEN and parked payloads. Given a
 * transaction's manager, NOTIFY and parking run in that transaction (delivered at its commit).
 */
export interface NotifyTransport {
  notify(channel: string, payload: string, manager?: EntityManager): Promise<void>;
  /**
   * Calls onPayload for every notification on the channel until the returned stop is called;
   * onResumed once listening again after the connection dropped (what was sent meanwhile is lost).
   */
  listen(
    channel: string,
    onPayload: (payload: string) => void,
    onResumed?: () => void,
  ): Promise<() => Promise<void>>;
  park(body: string, manager?: EntityManager): Promise<string>;
  fetchParked(id: string): Promise<string | null>;
  /** Deletes payloads parked before `olderThanMs` ago; returns how many. */
  pruneParked(olderThanMs: number): Promise<number>;
}

/** The SQL shared by every transport: statements run through whatever connection is at hand. */
abstract class SqlNotifyTransport implements NotifyTransport {
  protected abstract db: Queryable;

  abstract listen(
    channel: string,
    onPayload: (payload: string) => void,
    onResumed?: () => void,
  ): Promise<() => Promise<void>>;

  async notify(channel: string, payload: string, manager?: EntityManager): Promise<void> {
    await run(this.on(manager), sql`SELECT pg_notify(${channel}, ${payload})`);
  }

  async park(body: string, manager?: EntityManager): Promise<string> {
    const [row] = await run<{ id: string }>(
      this.on(manager),
      sql`INSERT INTO event_payloads (body) VALUES (${body}) RETURNING id`,
    );
    return row.id;
  }

  /** The transaction's connection when given, else whatever connection is at hand. */
  private on(manager?: EntityManager): Queryable {
    return manager ?? this.db;
  }

  async fetchParked(id: string): Promise<string | null> {
    const [row] = await run<{ body: string }>(
      this.db,
      sql`SELECT body FROM event_payloads WHERE id = ${id}`,
    );
    return row?.body ?? null;
  }

  async pruneParked(olderThanMs: number): Promise<number> {
    const rows = await run(
      this.db,
      sql`DELETE FROM event_payloads WHERE created_at < now() - make_interval(secs => ${olderThanMs} / 1000.0)
       RETURNING id`,
    );
    return rows.length;
  }
}

/**
 * A real PostgreSQL server: statements through the application's pool, LISTEN on a dedicated
 * connection (DATABASE_LISTEN_URL: direct to the primary, never through a pooler in
 * transaction mode, which would drop the LISTEN with the transaction) that reconnects, to the
 * primary found then (a failover included), and listens again after it drops.
 */
export class PgNotifyTransport extends SqlNotifyTransport {
  private readonly logger = new Logger('EventBus');

  constructor(
    protected readonly db: DataSource,
    private readonly primary: ServerLocator,
  ) {
    super();
  }

  async listen(channel: string, onPayload: (payload: string) => void, onResumed?: () => void) {
    let client: pg.Client | null = null;
    let stopped = false;
    let lost = false;
    let retryMs = 500;
    const connect = async (): Promise<void> => {
      const { client: next } = await this.primary.connect({ application_name: 'keepsake-listen' });
      next.on('notification', (n) => {
        if (n.channel === channel && n.payload !== undefined) onPayload(n.payload);
      });
      next.on('error', (err) => {
        this.logger.warn({ msg: 'listener connection lost', error: err.message });
        lost = true;
        void next.end().catch(() => undefined);
        if (!stopped) reconnect();
      });
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      client = next;
      retryMs = 500;
      if (lost) {
        lost = false;
        this.logger.warn({ msg: 'listener reconnected', channel });
        onResumed?.();
      }
    };
    const reconnect = () => {
      client = null;
      setTimeout(() => {
        if (stopped) return;
        connect().catch((err: Error) => {
          this.logger.warn({ msg: 'listener reconnect failed', error: err.message, retryMs });
          // Events published while nobody listens are lost to this instance's subscribers, and
          // a refused connection costs the server next to nothing: try again soon.
          retryMs = Math.min(retryMs * 2, 2_000);
          reconnect();
        });
      }, retryMs).unref();
    };
    await connect();
    return async () => {
      stopped = true;
      await (client as pg.Client | null)?.end().catch(() => undefined);
    };
  }
}
