import { countTokens } from '../llm/tokenizer.js';
import { chunkMessage } from './chunker.js';

const on = { maxTokens: 500, chunking: true };

function paragraph(seed: string, sentences: number): string {
  return Array.from(
    { length: sentences },
    (_, i) => `${seed} sentence number ${i} talks about the garden, the bees and the old shed.`,
  ).join(' ');
}

describe('chunkMessage', () => {
  it('keeps a short turn whole', () => {
    const chunks = chunkMessage('Grandpa loved fishing on Lake Erie.', on);
    expect(chunks).toEqual([
      {
        position: 0,
        text: 'Grandpa loved fishing on Lake Erie.',
        tokens: countTokens('Grandpa loved fishing on Lake Erie.'),
        isCode: false,
        language: null,
        start: 0,
        end: 35,
      },
    ]);
  });

  it('splits long prose at paragraph boundaries, every chunk within the limit', () => {
    const paras = Array.from({ length: 12 }, (_, i) => paragraph(`P${i}`, 6));
    const text = paras.join('\n\n');
    const chunks = chunkMessage(text, { maxTokens: 200, chunking: true });
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) {
      expect(chunk.tokens).toBeLessThanOrEqual(200);
      expect(chunk.text).toBe(text.slice(chunk.start, chunk.end));
      // Whole paragraphs only: each chunk starts and ends where a paragraph does.
      expect(paras.some((p) => chunk.text.startsWith(p))).toBe(true);
      expect(paras.some((p) => chunk.text.endsWith(p))).toBe(true);
    }
    expect(chunks.map((c) => c.position)).toEqual(chunks.map((_, i) => i));
    // Nothing lost: every paragraph is in exactly one chunk.
    for (const p of paras) expect(chunks.filter((c) => c.text.includes(p))).toHaveLength(1);
  });

  it('splits a paragraph that is too long on its own at sentence boundaries', () => {
    const text = paragraph('Long', 60);
    const chunks = chunkMessage(text, { maxTokens: 120, chunking: true });
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.tokens).toBeLessThanOrEqual(120);
      expect(chunk.text.endsWith('shed.')).toBe(true);
    }
  });

  it('cuts text without spaces (Chinese) by characters within the limit', () => {
    const text = '奶奶的花园里有很多玫瑰和蜜蜂'.repeat(80);
    const chunks = chunkMessage(text, { maxTokens: 100, chunking: true });
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((c) => c.text).join('')).toBe(text);
    for (const chunk of chunks) expect(chunk.tokens).toBeLessThanOrEqual(100);
  });

  it('keeps a code block whole and marks it as code, apart from the prose around it', () => {
    const code =
      '```ts\nexport function parseDate(input: string) {\n\n  return new Date(input);\n}\n```';
    const text = `Here is the helper we wrote:\n\n${code}\n\nIt fails on empty strings.`;
    const chunks = chunkMessage(text, on);
    expect(chunks.map((c) => [c.text, c.isCode, c.language])).toEqual([
      ['Here is the helper we wrote:', false, null],
      [code, true, 'ts'],
      ['It fails on empty strings.', false, null],
    ]);
    expect(text.slice(chunks[1].start, chunks[1].end)).toBe(code);
  });

  it('treats an unclosed fence as code to the end of the turn', () => {
    const chunks = chunkMessage('Look:\n~~~\nSELECT 1;\nSELECT 2;', on);
    expect(chunks.map((c) => [c.text, c.isCode])).toEqual([
      ['Look:', false],
      ['~~~\nSELECT 1;\nSELECT 2;', true],
    ]);
  });

  it('splits a code block larger than the limit at line boundaries, each part fenced', () => {
    const lines = Array.from(
      { length: 200 },
      (_, i) => `const value${i} = compute(${i}); // step ${i}`,
    );
    const text = '```js\n' + lines.join('\n') + '\n```';
    const chunks = chunkMessage(text, { maxTokens: 150, chunking: true });
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.isCode).toBe(true);
      expect(chunk.language).toBe('js');
      expect(chunk.tokens).toBeLessThanOrEqual(150);
      expect(chunk.text.startsWith('```js\n')).toBe(true);
      expect(chunk.text.endsWith('\n```')).toBe(true);
    }
    const bodies = chunks.map((c) => c.text.slice('```js\n'.length, -'\n```'.length));
    expect(bodies.join('\n')).toBe(lines.join('\n'));
  });

  it('with chunking off, returns the whole turn as one chunk', () => {
    const text = Array.from({ length: 12 }, (_, i) => paragraph(`P${i}`, 6)).join('\n\n');
    const chunks = chunkMessage(text, { maxTokens: 100, chunking: false });
    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatchObject({ position: 0, text, isCode: false });
    expect(chunks[0].tokens).toBeGreaterThan(100);
    const code = chunkMessage('```py\nprint(1)\n```', { maxTokens: 100, chunking: false });
    expect(code[0]).toMatchObject({ isCode: true, language: 'py' });
  });

  it('ignores blank turns and trims whitespace around paragraphs', () => {
    expect(chunkMessage('   \n\n  ', on)).toEqual([]);
    expect(chunkMessage('\n\n  Hello there.  \n\n', on).map((c) => c.text)).toEqual([
      'Hello there.',
    ]);
  });
});
