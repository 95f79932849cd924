import pg from 'pg';
import { DatabaseQueue } from './database-queue.js';

type Checkout = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (err?: Error | boolean) => void,
) => void;

/**
 * `pg` for TypeORM's `driver` option, with a pool whose checkouts take their turn from `queue`
 * first: the pool itself then never has anyone waiting, and the queue decides who goes next.
 * The turn is given back when the client is released (after a statement, or at the end of a
 * transaction, which keeps the connection throughout).
 */
export function queuedPg(queue: DatabaseQueue, base: typeof pg = pg): typeof pg {
  class QueuedPool extends base.Pool {
    override connect(): Promise<pg.PoolClient>;
    override connect(callback: Checkout): void;
    override connect(callback?: Checkout): Promise<pg.PoolClient> | void {
      const checkout = queue.acquire().then(async (giveBack) => {
        let client: pg.PoolClient;
        try {
          client = await super.connect();
        } catch (err) {
          giveBack();
          throw err;
        }
        // pg sets a fresh release on every checkout: this one also gives the turn back.
        const release = client.release;
        client.release = (err?: Error | boolean) => {
          try {
            release.call(client, err);
          } finally {
            giveBack();
          }
        };
        return client;
      });
      if (!callback) return checkout;
      checkout.then(
        (client) => callback(undefined, client, client.release),
        (err: Error) => callback(err, undefined, () => undefined),
      );
    }
  }
  return { ...base, Pool: QueuedPool } as typeof pg;
}
