// Runs the embedded PostgreSQL (PGlite, WebAssembly) off the service's thread: each statement
// executes synchronously inside PGlite, and on the main thread it stalled the event loop for as
// long as it ran (requests, timers and new connections all waited behind it).
// The main thread sends wire-protocol bytes and gets back the server's bytes; `pg` parses them.
// Plain JavaScript so the same file runs from src/ under Jest and from dist/ after the build.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { PrivateNodeFS } from './private-node-fs.mjs';

let db;
try {
  db = await PGlite.create({
    fs: new PrivateNodeFS(workerData.dataDir),
    extensions: { vector, pg_trgm },
  });
  parentPort.postMessage({ type: 'ready' });
} catch (err) {
  parentPort.postMessage({ type: 'fatal', message: String(err?.message ?? err) });
  process.exit(1);
}

// The main thread sends one batch at a time and waits for its answer, so these never overlap.
parentPort.on('message', async (msg) => {
  if (msg.type === 'exec') {
    try {
      // Streamed, not execProtocolRaw: that one also parses every answer into a list of results
      // that only execProtocol empties, so each row read (a story's file, every turn) stayed in
      // this thread's memory for good: reading 600 MB of files grew the process by 1.3 GB, and
      // by 50 MB this way (bench:archive).
      const chunks = [];
      let size = 0;
      await db.execProtocolRawStream(msg.data, {
        onRawData: (chunk) => {
          // A copy: the chunk may be a view of PGlite's memory, reused by the next.
          chunks.push(chunk.slice());
          size += chunk.length;
        },
      });
      const answer = new Uint8Array(size);
      let at = 0;
      for (const chunk of chunks) {
        answer.set(chunk, at);
        at += chunk.length;
      }
      parentPort.postMessage({ type: 'result', id: msg.id, data: answer }, [answer.buffer]);
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
