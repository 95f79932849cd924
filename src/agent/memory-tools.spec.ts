import { parseMemoryToolCall } from './memory-tools.js';

const ID = '0b9c7a4e-3f1d-4c8e-9a6b-2d5e8f1a3c7b';

describe('memory tool arguments', () => {
  it('accepts valid calls', () => {
    expect(parseMemoryToolCall('memory_save', '{"content":" I love tea. "}')).toEqual({
      ok: true,
      call: { name: 'memory_save', content: 'I love tea.' },
    });
    expect(parseMemoryToolCall('memory_lookup', '{"query":"my sister"}')).toEqual({
      ok: true,
      call: { name: 'memory_lookup', query: 'my sister' },
    });
    expect(parseMemoryToolCall('memory_forget', '{"query":"my job"}')).toEqual({
      ok: true,
      call: { name: 'memory_forget', query: 'my job', memoryIds: [], previousTurn: false },
    });
    expect(parseMemoryToolCall('memory_forget', `{"memoryIds":["${ID.toUpperCase()}"]}`)).toEqual({
      ok: true,
      call: { name: 'memory_forget', query: null, memoryIds: [ID], previousTurn: false },
    });
    expect(parseMemoryToolCall('memory_forget', '{"previousTurn":true}')).toMatchObject({
      ok: true,
      call: { previousTurn: true },
    });
  });

  it.each([
    ['memory_save', '{"content":5}', /\$\.content: expected a string/],
    ['memory_save', '{"content":"   "}', /content/],
    ['memory_save', '{}', /content/],
    ['memory_save', '{"content":"x","extra":1}', /extra/],
    ['memory_save', `{"content":"${'a'.repeat(2001)}"}`, /content/],
    ['memory_save', 'not json', /not valid JSON/],
    ['memory_lookup', '{"query":""}', /query/],
    ['memory_forget', '{}', /exactly one of/],
    ['memory_forget', `{"query":"x","memoryIds":["${ID}"]}`, /exactly one of/],
    ['memory_forget', '{"memoryIds":["42"]}', /"42" is not a memory id/],
    ['memory_forget', '{"memoryIds":"x"}', /memoryIds/],
    ['memory_delete_all', '{}', /no tool named/],
  ])('refuses %s %s', (name, args, error) => {
    const parsed = parseMemoryToolCall(name, args);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toMatch(error);
  });
});
