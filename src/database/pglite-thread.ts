import { Duplex } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { Logger } from '@nestjs/common';

const WORKER_URL = new URL('./pglite.worker.mjs', import.meta.url);

/** A trusting server's answer to a startup message: AuthenticationOk, ReadyForQuery (idle). */
const STARTED = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49]);
const TERMINATE = 0x58;

type Reply =
  | { type: 'ready' }
  | { type: 'fatal'; message: string }
  | { type: 'result'; id: number; data: Uint8Array }
  | { type: 'error'; id: number; message: string }
  | { type: 'closed' };

/**
 * The embedded PostgreSQL in a worker thread (pglite.worker.mjs): statements run there, so the
 * service's event loop keeps serving requests while one executes. The service talks to it with
 * the wire protocol through `pg`, as to a server: `stream()` is what `pg` connects through.
 */
export class PGliteThread {
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (data: Uint8Array) => void; reject: (err: Error) => void }
  >();
  private turn: Promise<unknown> = Promise.resolve();
  private failure: Error | null = null;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly worker: Worker,
    /** Called once if the thread stops on its own (not closed): the database must be reopened. */
    private readonly onExit: () => void,
  ) {
    // Like PGlite in this thread, the database keeps the process alive only while it is asked
    // something (a script awaiting a statement), not once everything else is done.
    worker.unref();
    worker.on('message', (reply: Reply) => {
      if (reply.type !== 'result' && reply.type !== 'error') return;
      const call = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if (reply.type === 'result') call?.resolve(reply.data);
      else call?.reject(new Error(reply.message));
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => this.fail(new Error(`the database thread exited (${code})`)));
  }

  /** Opens the database in `dataDir` in a thread of its own; resolves once it is ready. */
  static start(dataDir: string, onStopped: () => void = () => undefined): Promise<PGliteThread> {
    const worker = new Worker(WORKER_URL, { workerData: { dataDir } });
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      const onExit = (code: number) => reject(new Error(`the database thread exited (${code})`));
      worker.once('error', onError);
      worker.once('exit', onExit);
      worker.once('message', (reply: Reply) => {
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (reply.type === 'ready') resolve(new PGliteThread(worker, onStopped));
        else {
          reject(new Error(reply.type === 'fatal' ? reply.message : 'the database did not start'));
          void worker.terminate();
        }
      });
    });
  }

  /** Sends wire-protocol messages; resolves with every byte the database answered. In turn. */
  exec(data: Uint8Array): Promise<Uint8Array> {
    const run = this.turn.then(
      () =>
        new Promise<Uint8Array>((resolve, reject) => {
          if (this.failure) return reject(this.failure);
          const id = this.nextId++;
          if (this.pending.size === 0) this.worker.ref();
          this.pending.set(id, { resolve, reject });
          this.worker.postMessage({ type: 'exec', id, data });
        }),
    );
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** A connection for `pg` (its `stream` option). */
  stream(): Duplex {
    return new ProtocolStream(this);
  }

  /** Closes the database (after what was sent) and ends the thread. */
  close(): Promise<void> {
    this.closing ??= this.turn.then(async () => {
      if (this.failure) return;
      this.worker.ref();
      await new Promise<void>((resolve) => {
        this.worker.on('message', (reply: Reply) => {
          if (reply.type === 'closed') resolve();
        });
        this.worker.once('exit', () => resolve());
        this.worker.postMessage({ type: 'close' });
      });
      this.failure = new Error('the database is closed');
      await this.worker.terminate();
    });
    return this.closing;
  }

  /** Ends the thread at once, as PostgreSQL aborting inside it would. */
  async abort(): Promise<void> {
    await this.worker.terminate();
  }

  private fail(err: Error): void {
    if (!this.failure && !this.closing) {
      // Every statement fails until the database is opened again: say why, once.
      new Logger('Database').error({ msg: 'the embedded database stopped', error: err.message });
      this.failure = err;
      this.onExit();
    }
    this.failure ??= err;
    for (const call of this.pending.values()) call.reject(err);
    this.pending.clear();
  }
}

/**
 * A socket-like stream for `pg`: the startup message is answered here (one trusted session, as
 * PGlite's own adapter does), Terminate is dropped (every connection shares the one session,
 * which stays open), and what `pg` writes in one go (parse, bind, execute, sync) goes to the
 * thread as one batch.
 */
class ProtocolStream extends Duplex {
  private started = false;
  private batch: Buffer[] = [];

  constructor(private readonly thread: PGliteThread) {
    super();
  }

  connect(): this {
    process.nextTick(() => this.emit('connect'));
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }

  ref(): this {
    return this;
  }

  unref(): this {
    return this;
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    if (!this.started) {
      this.started = true;
      this.push(STARTED);
    } else if (chunk[0] !== TERMINATE) {
      if (this.batch.length === 0) queueMicrotask(() => this.send());
      this.batch.push(chunk);
    }
    callback();
  }

  override _final(callback: () => void): void {
    this.push(null);
    callback();
  }

  private send(): void {
    const data = Buffer.concat(this.batch);
    this.batch = [];
    this.thread.exec(data).then(
      (out) => {
        if (out.byteLength > 0) this.push(Buffer.from(out.buffer, out.byteOffset, out.byteLength));
      },
      (err: Error) => this.destroy(err),
    );
  }
}
