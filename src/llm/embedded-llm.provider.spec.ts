import { jest } from '@jest/globals';
import { MemoryUsageRecorder } from '../../test/support/fake-openai/memory-usage.recorder.js';
import { packagedModelPath } from '../../test/support/packaged-model.js';
import { EmbeddedLanguageModel, EmbeddedModelOptions } from './embedded-llm.provider.js';
import { toGrammarSchema } from './grammar-schema.js';
import { summaryProblem } from './grounding.js';
import { ModelOutputError } from './model.errors.js';
import { MEMORIES_SCHEMA, TURNS_SUMMARY_SCHEMA } from './task-schemas.js';

/**
 * The embedded model path against a real model: SmolLM2-135M-Instruct, the one a registry
 * package carries (weak on purpose: it is what the path must survive). Prompts are short and
 * token caps small, so the file runs in well under a minute on one thread.
 */
// Generous: a loaded machine has made one short model call take 40 s; a quiet one takes 2 to 4.
jest.setTimeout(600_000);

describe('EmbeddedLanguageModel (SmolLM2-135M, in a worker)', () => {
  let recorder: MemoryUsageRecorder;
  let requests: { lane: string; body: Record<string, unknown> }[];
  let model: EmbeddedLanguageModel;
  let modelPath: string;

  const create = (over: Partial<EmbeddedModelOptions> = {}) =>
    new EmbeddedLanguageModel(
      {
        modelPath,
        modelId: 'embedded:smollm2-135m-test',
        label: 'SmolLM2-135M',
        threads: 1,
        contextSize: 2048,
        replyMaxTokens: 24,
        onRequest: (r) => requests.push(r),
        ...over,
      },
      recorder,
    );

  beforeAll(async () => {
    modelPath = await packagedModelPath();
    recorder = new MemoryUsageRecorder();
    requests = [];
    model = create();
    const info = await model.warmUp();
    expect(info.contextSize).toBe(2048);
    expect(info.threads).toBe(1);
    expect(info.memoryBytes).toBeGreaterThan(50e6);
  });
  afterAll(() => model?.close());
  beforeEach(() => {
    recorder.calls.length = 0;
    requests.length = 0;
  });

  it('turns a task schema into a grammar with its limits: a confidence cannot exceed 1', () => {
    const grammar = toGrammarSchema(MEMORIES_SCHEMA) as {
      properties: {
        memories: { maxItems: number; items: { properties: Record<string, unknown> } };
      };
    };
    expect(grammar.properties.memories.maxItems).toBe(3);
    const confidence = grammar.properties.memories.items.properties.confidence as {
      enum: number[];
    };
    expect(Math.max(...confidence.enum)).toBe(1);
    expect(Math.min(...confidence.enum)).toBe(0);
    expect(confidence.enum).toContain(0.85);
    const summary = toGrammarSchema(TURNS_SUMMARY_SCHEMA) as {
      properties: { summary: { minLength: number } };
    };
    expect(summary.properties.summary.minLength).toBe(20);
  });

  it('extracts under the grammar: every answer is in range, and only what the user said is kept', async () => {
    const result = await model.extractMemories({
      userTurn: 'My sister Anna lives in Lisbon and I visit her every spring.',
      assistantTurn: 'You are such a caring sibling! Your kindness must mean the world to her.',
    });
    expect(result.memories.length).toBeLessThanOrEqual(3);
    for (const memory of result.memories) {
      expect(memory.confidence).toBeGreaterThanOrEqual(0);
      expect(memory.confidence).toBeLessThanOrEqual(1);
      // The assistant's compliment is not something the user said about themselves.
      expect(memory.content).not.toMatch(/caring|kindness|world/i);
      expect(memory.content).not.toMatch(/<[A-Z]/);
    }
    expect(requests[0]).toMatchObject({ lane: 'task', body: { maxTokens: 400 } });
    expect(requests[0].body.schema).toEqual(toGrammarSchema(MEMORIES_SCHEMA));
    expect(result.call).toMatchObject({
      task: 'extractMemories',
      ok: true,
      model: 'embedded:smollm2-135m-test',
    });
    expect(result.call.promptTokens).toBeGreaterThan(300);
  });

  it('asks again differently when an answer is refused, and records what every attempt cost', async () => {
    const cut = create({ taskMaxTokens: { extractMemories: 6 } });
    try {
      const err = await cut
        .extractMemories({ userTurn: 'I work as a nurse in Leeds.' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ModelOutputError);
      expect((err as ModelOutputError).message).toMatch(/token limit/);
      expect(requests.map((r) => [r.body.temperature, r.body.seed])).toEqual([
        [undefined, undefined],
        [0.5, 7919 * 2],
        [0.9, 7919 * 3],
      ]);
      expect(String((requests[1].body.messages as { content: string }[])[0].content)).toMatch(
        /previous answer was refused: .*cut at 6 tokens/,
      );
      expect(recorder.calls.at(-1)).toMatchObject({ ok: false, attempts: 3, completionTokens: 18 });
      expect(recorder.calls.at(-1)!.promptTokens).toBeGreaterThan(900);
    } finally {
      await cut.close();
    }
  });

  it('summarizes a span under its grammar or refuses it: no turn outside it, no example, no junk', async () => {
    const short = create({ taskMaxTokens: { summarizeTurns: 160 } });
    const turns = [
      'Grandpa Joe worked at the steel mill in Pittsburgh for forty years.',
      'What did he do at the mill?',
      'He ran the big crane, and he was proud of it.',
      'Every Sunday he took us fishing at the lake.',
    ].map((content, i) => ({
      turnIndex: 40 + i,
      role: (i % 2 === 1 && i < 2 ? 'ASSISTANT' : 'USER') as 'USER' | 'ASSISTANT',
      content,
      occurredAt: new Date(Date.UTC(2024, 4, 1, 10, i)),
    }));
    try {
      const result = await short
        .summarizeTurns({ legacyName: 'Grandpa Joe', turns })
        .catch((e: unknown) => e);
      const grammar = requests[0].body.schema as {
        properties: { facts: { items: { properties: { sourceTurnIndexes: { items: unknown } } } } };
      };
      // The grammar can only name the span's turns.
      expect(grammar.properties.facts.items.properties.sourceTurnIndexes.items).toEqual({
        enum: [40, 41, 42, 43],
      });
      if (result instanceof ModelOutputError) {
        // Refused after asking three times, differently: nothing half-used.
        expect(requests).toHaveLength(3);
        return;
      }
      const summary = result as Awaited<ReturnType<EmbeddedLanguageModel['summarizeTurns']>>;
      expect(
        summaryProblem(
          summary.summary,
          turns.map((t) => t.content),
        ),
      ).toBeNull();
      for (const fact of summary.facts) {
        expect(fact.content).toMatch(/Joe/);
        expect(fact.content).not.toMatch(/<[A-Z]|\b(I|my|we)\b/);
        expect(fact.sourceTurnIndexes.every((n) => n >= 40 && n <= 43)).toBe(true);
      }
    } finally {
      await short.close();
    }
  });

  it('streams a reply, marks one cut at its token cap, and never stalls the event loop', async () => {
    const deltas: string[] = [];
    let worst = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 10);
    try {
      const reply = await model.reply(
        {
          system: 'You are a warm companion helping a user remember Grandpa Joe.',
          messages: [{ role: 'USER', content: 'Tell me a long story about his garden.' }],
        },
        (d) => deltas.push(d),
      );
      expect(deltas.length).toBeGreaterThan(3);
      expect(deltas.join('')).toBe(reply.text);
      expect(reply.finishReason).toBe('length');
      expect(reply.usage.completionTokens).toBe(24);
      expect(recorder.calls.at(-1)).toMatchObject({ task: 'reply', ok: true });
    } finally {
      clearInterval(ticker);
    }
    // Generation runs in the worker: the service's own thread keeps its timers.
    expect(worst).toBeLessThan(250);
  });

  it('stops a reply nobody waits for, and serves replies before background tasks', async () => {
    const controller = new AbortController();
    const slow = create({ replyMaxTokens: 200, taskMaxTokens: { rewriteQuery: 40 } });
    try {
      await slow.warmUp();
      const order: string[] = [];
      const task1 = slow
        .rewriteQuery({ question: 'Where did he grow up?', legacyName: 'Joe' })
        .catch(() => null)
        .then(() => order.push('task 1'));
      // Once it runs, a second task and a reply wait: the reply is served first.
      while (requests.length === 0) await new Promise((r) => setTimeout(r, 10));
      const task2 = slow
        .rewriteQuery({ question: 'What did he grow?', legacyName: 'Joe' })
        .catch(() => null)
        .then(() => order.push('task 2'));
      const reply = slow
        .reply(
          {
            system: 'Be brief.',
            messages: [{ role: 'USER', content: 'Hello there.' }],
            signal: controller.signal,
          },
          () => controller.abort(),
        )
        .then((r) => {
          order.push('reply');
          return r;
        });
      const [, , answered] = await Promise.all([task1, task2, reply]);
      // The reply went to the model after the task already running, before the one waiting.
      expect(requests.slice(0, 3).map((r) => r.lane)).toEqual(['task', 'reply', 'task']);
      expect(order).toContain('reply');
      expect(answered.finishReason).toBe('cancelled');
      expect(answered.usage.completionTokens).toBeLessThan(200);
    } finally {
      await slow.close();
    }
  });
});
