import { countTokens } from '../llm/tokenizer.js';
import type { ParsedPage } from './parsing/document-parser.js';
import { chunkStory, chunkStoryInSteps, type StoryChunk } from './story-chunker.js';

function paragraph(seed: string, sentences: number): string {
  return Array.from(
    { length: sentences },
    (_, i) => `${seed} sentence ${i} remembers the orchard, the ladder and the blue kitchen door.`,
  ).join(' ');
}

/** Every chunk is within the limit, is exactly its slice of its page, and ordinals count up. */
function expectWellFormed(pages: ParsedPage[], chunks: StoryChunk[], maxTokens: number) {
  expect(chunks.map((c) => c.ordinal)).toEqual(chunks.map((_, i) => i));
  for (const chunk of chunks) {
    const page = pages.find((p) => p.number === chunk.page);
    expect(page).toBeDefined();
    expect(page!.text.slice(chunk.charStart, chunk.charEnd)).toBe(chunk.text);
    expect(chunk.text).toBe(chunk.text.trim());
    expect(chunk.text.length).toBeGreaterThan(0);
    expect(chunk.tokens).toBe(countTokens(chunk.text));
    expect(chunk.tokens).toBeLessThanOrEqual(maxTokens);
  }
}

describe('chunkStory', () => {
  it('keeps a short page whole', () => {
    const pages = [{ number: 1, text: '\nGrandma kept bees behind the barn.\n' }];
    expect(chunkStory(pages)).toEqual([
      {
        ordinal: 0,
        text: 'Grandma kept bees behind the barn.',
        tokens: countTokens('Grandma kept bees behind the barn.'),
        page: 1,
        charStart: 1,
        charEnd: 35,
        heading: null,
      },
    ]);
  });

  it('packs whole paragraphs up to the limit', () => {
    const paras = Array.from({ length: 12 }, (_, i) => paragraph(`P${i}`, 5));
    const pages = [{ number: 1, text: paras.join('\n\n') }];
    const chunks = chunkStory(pages, 200);
    expectWellFormed(pages, chunks, 200);
    expect(chunks.length).toBeGreaterThan(3);
    // Packed: fewer chunks than paragraphs, each starting and ending at a paragraph's edges.
    expect(chunks.length).toBeLessThan(paras.length);
    for (const chunk of chunks) {
      expect(paras.some((p) => chunk.text.startsWith(p))).toBe(true);
      expect(paras.some((p) => chunk.text.endsWith(p))).toBe(true);
    }
    for (const p of paras) expect(chunks.filter((c) => c.text.includes(p))).toHaveLength(1);
  });

  it('never lets a chunk span two pages, and keeps page numbers and offsets', () => {
    const pages = [
      { number: 1, text: 'The wedding was in June.' },
      { number: 2, text: '' },
      { number: 3, text: '   \n\n  ' },
      { number: 4, text: 'Page four begins.\n\nIt rained all day.' },
    ];
    const chunks = chunkStory(pages);
    expectWellFormed(pages, chunks, 500);
    expect(chunks.map((c) => [c.page, c.text, c.charStart, c.charEnd])).toEqual([
      [1, 'The wedding was in June.', 0, 24],
      [4, 'Page four begins.\n\nIt rained all day.', 0, 37],
    ]);
  });

  it('starts a chunk at each heading and remembers it for the chunks under it', () => {
    const text = [
      'A few words before any heading.',
      '# Childhood',
      'Born in a snowstorm.',
      '',
      'Walked to school uphill.',
      '## The farm',
      'Cows, mostly.',
      '```sh',
      '# not a heading',
      '```',
    ].join('\n');
    const pages = [
      { number: 1, text },
      { number: 2, text: 'More about the cows, on the next page.\n\n# Later life\nBoston.' },
    ];
    const chunks = chunkStory(pages);
    expectWellFormed(pages, chunks, 500);
    expect(chunks.map((c) => [c.page, c.heading, c.text])).toEqual([
      [1, null, 'A few words before any heading.'],
      [1, 'Childhood', '# Childhood\nBorn in a snowstorm.\n\nWalked to school uphill.'],
      // A fenced block is a chunk of its own, as in turns (see chunkMessage).
      [1, 'The farm', '## The farm\nCows, mostly.'],
      [1, 'The farm', '```sh\n# not a heading\n```'],
      // The section goes on over the page break: a new chunk, the same heading.
      [2, 'The farm', 'More about the cows, on the next page.'],
      [2, 'Later life', '# Later life\nBoston.'],
    ]);
  });

  it('keeps a heading with nothing under it with the heading that follows', () => {
    const pages = [{ number: 1, text: '# Part One\n\n## Chapter 1\nIt began in Naples.' }];
    expect(chunkStory(pages).map((c) => [c.heading, c.text])).toEqual([
      ['Chapter 1', '# Part One\n\n## Chapter 1\nIt began in Naples.'],
    ]);
  });

  it('splits every section on its own, even when short sections would fit together', () => {
    const pages = [{ number: 1, text: '# One\nA.\n# Two\nB.\n# Three\nC.' }];
    expect(chunkStory(pages).map((c) => c.text)).toEqual(['# One\nA.', '# Two\nB.', '# Three\nC.']);
  });

  it('splits a paragraph too long for one chunk at sentence ends', () => {
    const text = paragraph('Long', 60);
    const pages = [{ number: 7, text: `# Letters\n\n${text}` }];
    const chunks = chunkStory(pages, 120);
    expectWellFormed(pages, chunks, 120);
    expect(chunks.length).toBeGreaterThan(3);
    // The heading goes with the first part of the paragraph, not alone.
    expect(chunks[0].text.startsWith('# Letters\n\nLong sentence 0 ')).toBe(true);
    for (const chunk of chunks) {
      expect(chunk.page).toBe(7);
      expect(chunk.heading).toBe('Letters');
      expect(chunk.text.endsWith('door.')).toBe(true);
    }
  });

  it('splits a sentence too long for one chunk at spaces, then characters', () => {
    const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const cjk = '奶奶的花园里有很多玫瑰和蜜蜂'.repeat(60);
    const pages = [{ number: 1, text: `${words}\n\n${cjk}` }];
    const chunks = chunkStory(pages, 50);
    expectWellFormed(pages, chunks, 50);
    const wordChunks = chunks.filter((c) => c.text.startsWith('word'));
    expect(wordChunks.length).toBeGreaterThan(5);
    expect(wordChunks.map((c) => c.text).join(' ')).toBe(words);
    const cjkChunks = chunks.filter((c) => !c.text.startsWith('word'));
    expect(cjkChunks.length).toBeGreaterThan(1);
    expect(cjkChunks.map((c) => c.text).join('')).toBe(cjk);
  });

  it('stays within the limit when many blank lines separate short paragraphs', () => {
    // The turn chunker counts about two tokens per break: these breaks cost five.
    const text = Array.from({ length: 40 }, (_, i) => `Line ${i}.`).join('\n \n \n \n \n \n');
    const pages = [{ number: 1, text }];
    const chunks = chunkStory(pages, 20);
    expectWellFormed(pages, chunks, 20);
    for (let i = 0; i < 40; i++) {
      expect(chunks.filter((c) => new RegExp(`Line ${i}\\.`).test(c.text))).toHaveLength(1);
    }
  });

  it('is deterministic', () => {
    const pages = [
      { number: 1, text: `# A\n\n${paragraph('X', 30)}\n\n${paragraph('Y', 3)}` },
      { number: 2, text: paragraph('Z', 40) },
    ];
    const first = chunkStory(pages, 100);
    expect(chunkStory(pages, 100)).toEqual(first);
    expect(chunkStory(structuredClone(pages), 100)).toEqual(first);
  });

  it('returns nothing for no pages or empty pages', () => {
    expect(chunkStory([])).toEqual([]);
    expect(chunkStory([{ number: 1, text: '' }])).toEqual([]);
  });

  it('refuses a limit that is not a positive whole number', () => {
    expect(() => chunkStory([{ number: 1, text: 'x' }], 0)).toThrow(RangeError);
    expect(() => chunkStory([{ number: 1, text: 'x' }], 2.5)).toThrow(RangeError);
  });
});

describe('chunkStoryInSteps', () => {
  it('gives what chunkStory gives for pages shorter than a step, pausing between steps', async () => {
    const pages = Array.from({ length: 12 }, (_, i) => ({
      number: i + 1,
      text: `${i % 4 === 0 ? `# Part ${i}\n\n` : ''}${paragraph(`P${i}`, 8)}\n\n${paragraph(`Q${i}`, 3)}`,
    }));
    let pauses = 0;
    const chunks = await chunkStoryInSteps(pages, 120, async () => pauses++, 2_000);
    expect(chunks).toEqual(chunkStory(pages, 120));
    expect(pauses).toBeGreaterThan(2);
  });

  it('reads one long page in parts, with offsets in the whole page and headings carried', async () => {
    const paras = Array.from({ length: 300 }, (_, i) => paragraph(`L${i}`, 2));
    const text = `# The long letter\n\n${paras.join('\n\n')}`;
    const pages = [{ number: 1, text }];
    let pauses = 0;
    const chunks = await chunkStoryInSteps(pages, 200, async () => pauses++, 5_000);
    // A pause at least every two parts (a part is at least half a step).
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(text.length / 10_000));
    expectWellFormed(pages, chunks, 200);
    expect(chunks.every((c) => c.heading === 'The long letter')).toBe(true);
    // Every paragraph is in exactly one chunk: parts are cut between paragraphs.
    for (const p of paras) expect(chunks.filter((c) => c.text.includes(p))).toHaveLength(1);
  });

  it('cuts a page without breaks between characters and loses nothing', async () => {
    const text = 'x'.repeat(12_345);
    const chunks = await chunkStoryInSteps([{ number: 3, text }], 500, async () => {}, 1_000);
    expect(chunks.map((c) => c.text).join('')).toBe(text);
    expect(chunks.every((c) => c.page === 3)).toBe(true);
  });
});
