// The embedded language model (LLM=embedded): one GGUF model loaded with node-llama-cpp's
// prebuilt CPU build of llama.cpp, in a thread of its own so generation never stalls the
// service's event loop. It serves one request at a time; the service decides the order
// (replies first). Plain JavaScript so the same file runs from src/ under Jest and from dist/.
import { parentPort, workerData } from 'node:worker_threads';
import { getLlama, LlamaChat, LlamaLogLevel } from 'node-llama-cpp';

const { modelPath, threads, contextSize } = workerData;
const started = performance.now();

let chat;
let sequence;
let model;
let llama;
const grammars = new Map();
const running = new Map();

async function load() {
  // Never build, never look for a GPU: the CPU binaries inside the npm package are the ones used.
  llama = await getLlama({
    gpu: false,
    build: 'never',
    logLevel: LlamaLogLevel.error,
    maxThreads: threads,
  });
  model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ contextSize, threads, sequences: 1 });
  sequence = context.getSequence();
  chat = new LlamaChat({ contextSequence: sequence });
  parentPort.postMessage({
    type: 'ready',
    loadMs: Math.round(performance.now() - started),
    contextSize: context.contextSize,
    modelBytes: model.size,
    memoryBytes: (model.memoryUsage?.ram ?? model.size) + (context.memoryUsage?.ram ?? 0),
    threads: context.currentThreads,
    trainContextSize: model.trainContextSize,
  });
}

/** Grammars are compiled once per schema (a span's turn numbers make a few differ). */
async function grammarFor(schema) {
  const key = JSON.stringify(schema);
  let grammar = grammars.get(key);
  if (!grammar) {
    grammar = await llama.createGrammarForJsonSchema(schema);
    if (grammars.size >= 32) grammars.delete(grammars.keys().next().value);
    grammars.set(key, grammar);
  }
  return grammar;
}

function promptTokens(request) {
  const texts = [request.system, ...request.messages.map((m) => m.content)];
  // The chat template's own tokens (roles, separators) are a few per message.
  return texts.reduce((n, t) => n + model.tokenize(t).length + 4, 0);
}

async function run(request) {
  const controller = new AbortController();
  running.set(request.id, controller);
  try {
    const history = [
      { type: 'system', text: request.system },
      ...request.messages.map((m) =>
        m.role === 'user'
          ? { type: 'user', text: m.content }
          : { type: 'model', response: [m.content] },
      ),
    ];
    const before = sequence.tokenMeter.getState();
    const result = await chat.generateResponse(history, {
      grammar: request.schema ? await grammarFor(request.schema) : undefined,
      maxTokens: request.maxTokens,
      temperature: request.temperature ?? 0,
      seed: request.seed,
      signal: controller.signal,
      stopOnAbortSignal: true,
      onTextChunk: request.stream
        ? (text) => parentPort.postMessage({ type: 'delta', id: request.id, text })
        : undefined,
    });
    const used = sequence.tokenMeter.diff(before);
    parentPort.postMessage({
      type: 'done',
      id: request.id,
      text: result.response,
      stopReason: result.metadata.stopReason,
      promptTokens: promptTokens(request),
      completionTokens: used.usedOutputTokens,
    });
  } catch (err) {
    parentPort.postMessage({ type: 'error', id: request.id, message: String(err?.message ?? err) });
  } finally {
    running.delete(request.id);
  }
}

const loaded = load().catch((err) => {
  parentPort.postMessage({ type: 'fatal', message: String(err?.message ?? err) });
});

let queue = Promise.resolve();
parentPort.on('message', (message) => {
  if (message.type === 'cancel') {
    running.get(message.id)?.abort();
    return;
  }
  if (message.type === 'close') {
    // Stopped from inside: terminating a thread while llama.cpp runs aborts the whole process.
    for (const controller of running.values()) controller.abort();
    queue = queue
      .then(() => loaded)
      .then(() => llama?.dispose())
      .catch(() => undefined)
      .then(() => parentPort.close());
    return;
  }
  queue = queue.then(() => loaded).then(() => run(message));
});
