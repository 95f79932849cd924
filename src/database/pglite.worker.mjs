// Runs the embedded PostgreSQL (PGlite, WebAssembly) off the service's thread: each statement
// executes synchronously inside PGlite, and on the main thread it stalled the event loop for as
// long as it ran (requests, timers and new connections all waited behind it).
// The main thread sends wire-protocol bytes and gets back the server's bytes; `pg` parses them.
// Plain JavaScript so the same file runs from src/ under Jest and from dist/ after the build.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';

let db;
try {
  db = await PGlite.create({ dataDir: workerData.dataDir, extensions: { vector, pg_trgm } });
  parentPort.postMessage({ type: 'ready' });
} catch (err) {
  parentPort.postMessage({ type: 'fatal', message: String(err?.message ?? err) });
  process.exit(1);
}

// The main thread sends one batch at a time and waits for its answer, so these never overlap.
parentPort.on('message', async (msg) => {
  if (msg.type === 'exec') {
    try {
      const out = await db.execProtocolRaw(msg.data);
      // A copy of our own to hand over: the answer may be a view of PGlite's memory.
      const copy = new Uint8Array(out);
      parentPort.postMessage({ type: 'result', id: msg.id, data: copy }, [copy.buffer]);
    } catch (err) {
      parentPort.postMessage({ type: 'error', id: msg.id, message: String(err?.message ?? err) });
    }
  } else if (msg.type === 'close') {
    try {
      await db.close();
    } finally {
      parentPort.postMessage({ type: 'closed' });
    }
  }
});
