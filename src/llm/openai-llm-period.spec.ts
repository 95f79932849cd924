import { reply } from '../../test/support/fake-openai/fake-openai.server.js';
import {
  fakeOpenAiPerTest,
  openAiModelOn,
} from '../../test/support/fake-openai/openai-model.fixtures.js';
import { PeriodSource, SummarizePeriodInput } from './language-model.js';
import { ModelOutputError } from './model.errors.js';
import { OpenAiLanguageModelOptions } from './openai-llm.provider.js';
import { PERIOD_PROMPT_LIMITS, SCHEMA_NAME, TASK_MARKER } from './prompts.js';
import { countTokens } from './tokenizer.js';

const week = (from: string, to: string, weight: number, text: string): PeriodSource => ({
  kind: 'WEEK',
  from,
  to,
  weight,
  text,
  userTurns: [],
  themes: ['carpentry', 'the lake'],
  people: ['Anna'],
  places: ['Lake Tahoe'],
  emotionalTone: 'warm',
  patterns: [],
  conversationIds: ['c1'],
});

const month: SummarizePeriodInput = {
  legacyName: 'Joe Miller',
  period: 'MONTH',
  start: '2025-01-01',
  end: '2025-01-31',
  sources: [
    week('2024-12-30', '2025-01-05', 5 / 7, 'The user remembered the kitchen table Dad built.'),
    week('2025-01-06', '2025-01-12', 1, 'The user talked about summers fishing on the lake.'),
    {
      ...week('2025-01-27', '2025-02-02', 3 / 7, ''),
      kind: 'TURNS',
      themes: [],
      people: [],
      places: [],
      emotionalTone: null,
      userTurns: ['Dad taught Anna to fish at Lake Tahoe.'],
    },
  ],
  conversationCount: 3,
  turnCount: 14,
};

const validPeriod = {
  summary: 'The user remembered Joe Miller. They spoke of the lake. The tone was warm.',
  emotionalTone: 'warm and nostalgic',
  keyThemes: ['carpentry', 'the lake'],
  recurringPatterns: ['The user keeps returning to summers at the lake.'],
  people: ['Anna'],
  places: ['Lake Tahoe'],
};

describe('OpenAiLanguageModel.summarizePeriod against the fake server', () => {
  const openai = fakeOpenAiPerTest();

  const model = (overrides: Partial<OpenAiLanguageModelOptions> = {}) =>
    openAiModelOn(openai.fake, openai.recorder, overrides);

  it('returns the validated, tidied summary and records its prompt version', async () => {
    openai.fake.enqueue(
      'chat',
      reply.object({
        ...validPeriod,
        summary: `  ${validPeriod.summary} `,
        people: ['Anna', ' anna ', ''],
      }),
    );
    const result = await model().summarizePeriod(month);
    const sent = openai.fake.requestsFor('chat')[0].body;
    expect(sent.response_format?.json_schema?.name).toBe(SCHEMA_NAME.summarizePeriod);
    expect(sent.response_format?.json_schema?.strict).toBe(true);
    const { call, ...text } = result;
    expect(text).toEqual({ ...validPeriod, people: ['Anna'] });
    expect(call).toMatchObject({
      task: 'summarizePeriod',
      model: 'openai:fake-llm',
      attempts: 1,
      ok: true,
      promptVersion: 'summarize-period/2',
    });
    expect(openai.recorder.calls).toEqual([call]);
  });

  it("sends each source's dates and weight, oldest first", async () => {
    await model().summarizePeriod(month);
    const [system, user] = openai.fake.requestsFor('chat')[0].body.messages ?? [];
    expect(system.content).toMatch(new RegExp(`^${TASK_MARKER.summarizePeriod} `));
    expect(user.content).toContain('Period: MONTH 2025-01-01 to 2025-01-31');
    expect(user.content).toContain('Conversations: 3; turns: 14');
    const headers = (user.content ?? '').match(/^\[source \d+\] .*$/gm);
    expect(headers).toEqual([
      '[source 1] WEEK 2024-12-30 to 2025-01-05, weight 0.71',
      '[source 2] WEEK 2025-01-06 to 2025-01-12, weight 1',
      '[source 3] TURNS 2025-01-27 to 2025-02-02, weight 0.43',
    ]);
    expect(user.content).toContain('- Dad taught Anna to fish at Lake Tahoe.');
  });

  it('answers in auto mode from the sources alone', async () => {
    const result = await model().summarizePeriod(month);
    expect(result.summary).toMatch(/Joe Miller/);
    expect(result.keyThemes).toEqual(['carpentry', 'the lake']);
    expect(result.recurringPatterns).toHaveLength(2);
    expect(result.people).toEqual(['Anna']);
    expect(result.places).toEqual(['Lake Tahoe']);
  });

  it('keeps a year of long weeklies bounded, dropping the least weighty first', async () => {
    const long = 'The user remembered a long afternoon in the workshop. '.repeat(200);
    const sources = Array.from({ length: 60 }, (_, i) => {
      const day = new Date(Date.UTC(2024, 0, 1 + 7 * i)).toISOString().slice(0, 10);
      return { ...week(day, day, i === 59 ? 0.2 : 1, long), userTurns: [long] };
    });
    await model().summarizePeriod({
      ...month,
      period: 'YEAR',
      start: '2024-01-01',
      end: '2024-12-31',
      sources,
    });
    const user = openai.fake.requestsFor('chat')[0].body.messages?.[1].content ?? '';
    const shown = user.match(/^\[source \d+\] /gm) ?? [];
    expect(shown.length).toBeLessThanOrEqual(PERIOD_PROMPT_LIMITS.maxSources);
    expect(user).toMatch(
      new RegExp(`^Sources: ${shown.length} \\(${60 - shown.length} more left out`, 'm'),
    );
    expect(user).not.toContain('weight 0.2');
    expect(countTokens(user)).toBeLessThan(PERIOD_PROMPT_LIMITS.maxSourceTokens + 200);
  });

  it('rejects an answer missing a field or with a wrong type, never using part of it', async () => {
    const { places: _places, ...missing } = validPeriod;
    const bad = reply.object({ ...missing, keyThemes: 'the lake' });
    openai.fake.enqueue('chat', bad, bad, bad);
    const err = (await model()
      .summarizePeriod(month)
      .catch((e: unknown) => e)) as ModelOutputError;
    expect(err).toBeInstanceOf(ModelOutputError);
    expect(err.task).toBe('summarizePeriod');
    expect(err.problems).toEqual(['$.places: missing', '$.keyThemes: expected an array']);
    // Like the other tasks, an invalid answer is asked again twice, differently, then refused.
    expect(openai.fake.requestsFor('chat')).toHaveLength(3);
    expect(openai.recorder.last).toMatchObject({
      task: 'summarizePeriod',
      ok: false,
      attempts: 3,
      promptVersion: 'summarize-period/2',
    });
  });

  it('retries a server error, then succeeds', async () => {
    openai.fake.enqueue('chat', reply.error(503), reply.object(validPeriod));
    const result = await model().summarizePeriod(month);
    expect(result.call.attempts).toBe(2);
    expect(result.emotionalTone).toBe('warm and nostalgic');
  });

  it('falls back to json_object, carrying the schema in the prompt', async () => {
    openai.fake.rejectJsonSchema = true;
    const llm = model();
    const result = await llm.summarizePeriod(month);
    expect(result.call.attempts).toBe(3);
    expect(llm.structuredOutputMode).toBe('json_object');
    const [, , resent] = openai.fake.requestsFor('chat');
    expect(resent.body.response_format?.type).toBe('json_object');
    expect(resent.body.messages?.[0].content).toContain('"recurringPatterns"');
  });

  it('needs at least one source', () => {
    expect(() => model().summarizePeriod({ ...month, sources: [] })).toThrow(RangeError);
  });
});
