import { JsonSchema, toWireSchema, validateJson, withoutLimits } from './json-schema-lite.js';
import {
  MEMORIES_SCHEMA,
  PERIOD_SUMMARY_SCHEMA,
  TURNS_SUMMARY_SCHEMA,
  parseMemories,
  parsePeriodSummary,
  parseQueryRewrite,
} from './task-schemas.js';

describe('validateJson', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1 },
      tags: { type: 'array', maxItems: 2, items: { type: 'string', enum: ['a', 'b'] } },
      score: { type: 'number', minimum: 0, maximum: 1 },
      count: { type: 'integer' },
    },
    required: ['name', 'tags', 'score', 'count'],
    additionalProperties: false,
  };

  it('accepts a conforming value', () => {
    expect(validateJson(schema, { name: 'x', tags: ['a'], score: 0.5, count: 2 })).toEqual([]);
  });

  it('lists every problem with its path', () => {
    expect(
      validateJson(schema, { name: ' ', tags: ['a', 'c', 'b'], score: 2, count: 1.5, extra: true }),
    ).toEqual([
      '$.name: expected at least 1 characters',
      '$.tags: expected at most 2 items',
      '$.tags[1]: expected one of a, b',
      '$.score: expected <= 1',
      '$.count: expected an integer',
      '$.extra: unexpected property',
    ]);
    expect(validateJson(schema, [])).toEqual(['$: expected an object']);
    expect(validateJson(schema, { tags: [], score: 0, count: 0 })).toEqual(['$.name: missing']);
  });
});

describe('toWireSchema', () => {
  it('sends the whole schema, limits included, so a grammar made from it enforces them', () => {
    const wire = JSON.stringify(toWireSchema(MEMORIES_SCHEMA));
    expect(wire).toContain('"maxItems":3');
    expect(wire).toContain('"minimum":0,"maximum":1');
    expect(wire).toContain('"maxLength":500');
    expect(JSON.stringify(withoutLimits(MEMORIES_SCHEMA))).not.toMatch(
      /maxItems|minimum|maximum|minLength|maxLength/,
    );
    expect(wire).toContain('"additionalProperties":false');
    expect(wire).toContain(
      '"enum":["FACT","EMOTION","GOAL","PATTERN","RELATIONSHIP","PREFERENCE"]',
    );
    // Strict structured output needs every property listed as required.
    const wireSummary = toWireSchema(TURNS_SUMMARY_SCHEMA) as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(wireSummary.required.sort()).toEqual(Object.keys(wireSummary.properties).sort());
    const wirePeriod = toWireSchema(PERIOD_SUMMARY_SCHEMA) as typeof wireSummary;
    expect(wirePeriod.required.sort()).toEqual(Object.keys(wirePeriod.properties).sort());
  });
});

describe('parseMemories', () => {
  it('accepts bare JSON and one surrounding code fence, nothing else', () => {
    const input = { userTurn: 'Hello.' };
    expect(parseMemories('{"memories": []}', input)).toEqual({
      ok: true,
      value: { memories: [] },
      dropped: [],
    });
    expect(parseMemories('```json\n{"memories": []}\n```', input).ok).toBe(true);
    expect(parseMemories('Here you go: {"memories": []}', input)).toMatchObject({
      ok: false,
      reason: 'not JSON',
    });
  });
});

describe('parsePeriodSummary', () => {
  const valid = {
    summary: 'The user remembered Joe. They spoke of the lake. The tone was warm.',
    emotionalTone: 'warm',
    keyThemes: ['the lake'],
    recurringPatterns: [],
    people: ['Anna'],
    places: ['Lake Tahoe'],
  };
  const parse = (value: unknown) => parsePeriodSummary(JSON.stringify(value));

  it('accepts a valid object, trimming and dropping blank or repeated entries', () => {
    expect(parse(valid)).toEqual({ ok: true, value: valid });
    expect(
      parse({
        ...valid,
        summary: ` ${valid.summary}\n`,
        emotionalTone: ' warm ',
        keyThemes: [' the lake', 'The Lake', '', '  '],
        people: ['Anna', 'anna', 'Joe'],
      }),
    ).toEqual({ ok: true, value: { ...valid, people: ['Anna', 'Joe'] } });
  });

  it('rejects missing fields, wrong types, blank text and lists over their caps', () => {
    const { emotionalTone: _tone, ...missing } = valid;
    expect(parse(missing)).toMatchObject({
      ok: false,
      reason: 'schema violation',
      problems: ['$.emotionalTone: missing'],
    });
    expect(parse({ ...valid, people: 'Anna' })).toMatchObject({
      problems: ['$.people: expected an array'],
    });
    expect(parse({ ...valid, places: [3] })).toMatchObject({
      problems: ['$.places[0]: expected a string'],
    });
    expect(parse({ ...valid, summary: '  ' })).toMatchObject({
      problems: ['$.summary: expected at least 20 characters'],
    });
    expect(
      parse({ ...valid, keyThemes: Array.from({ length: 9 }, (_, i) => `t${i}`) }),
    ).toMatchObject({ problems: ['$.keyThemes: expected at most 8 items'] });
    expect(
      parse({ ...valid, recurringPatterns: Array.from({ length: 6 }, (_, i) => `p${i}`) }),
    ).toMatchObject({ problems: ['$.recurringPatterns: expected at most 5 items'] });
    expect(parse({ ...valid, mood: 'happy' })).toMatchObject({
      problems: ['$.mood: unexpected property'],
    });
    expect(parsePeriodSummary('The user was happy.')).toMatchObject({
      ok: false,
      reason: 'not JSON',
    });
  });
});

describe('parseQueryRewrite', () => {
  const parse = (value: unknown) => parseQueryRewrite(JSON.stringify(value));

  it('accepts an answer and up to three sub-questions, trimmed and without repeats', () => {
    expect(
      parse({ answer: ' We fished at the lake. ', subQuestions: [' Where? ', 'where?', 'When?'] }),
    ).toEqual({
      ok: true,
      value: { answer: 'We fished at the lake.', subQuestions: ['Where?', 'When?'] },
    });
    expect(parse({ answer: '', subQuestions: [] })).toEqual({
      ok: true,
      value: { answer: '', subQuestions: [] },
    });
  });

  it('rejects more than three sub-questions, missing fields and other text', () => {
    expect(parse({ answer: 'x', subQuestions: ['a?', 'b?', 'c?', 'd?'] })).toMatchObject({
      ok: false,
      reason: 'schema violation',
    });
    expect(parse({ answer: 'x' })).toMatchObject({ ok: false, reason: 'schema violation' });
    expect(parseQueryRewrite('Sure! Here it is.')).toMatchObject({ ok: false, reason: 'not JSON' });
  });
});
