// The message loop both embedding workers share: requests are served one at a time, in the
// order they came, and each answer's vectors are moved (not copied) back to the service.
// Plain JavaScript so the same file runs from src/ under Jest and from dist/ after the build.
import { parentPort } from 'node:worker_threads';

/** Serves `{ id, texts }` requests with `embedAll(texts)`, which resolves to a Float32Array. */
export function serveEmbeddings(embedAll) {
  let queue = Promise.resolve();
  parentPort.on('message', (message) => {
    queue = queue.then(async () => {
      try {
        const data = await embedAll(message.texts);
        parentPort.postMessage({ type: 'result', id: message.id, data }, [data.buffer]);
      } catch (err) {
        parentPort.postMessage({
          type: 'error',
          id: message.id,
          message: String(err?.message ?? err),
        });
      }
    });
  });
}
