import { countO200k } from '../../../test/support/raw-tokenizer.js';
import { normalizeMemory, canonicalFirstPerson, slotOf } from '../../memories/memory-text.js';
import { factFeatures, normalizeFact, tidyFact } from '../../facts/fact-relations.js';
import { chunkMessage } from '../../search/chunker.js';
import * as query from '../../search/query-analysis.js';
import { parseTimeExpression } from '../../search/time-expressions.js';
import { countTokens, truncateToTokens } from '../tokenizer.js';
import { summarizeExtractive } from './extractive-summarizer.js';
import { extractFactsHeuristic } from './fact-patterns.js';
import { extractMemoriesHeuristic } from './memory-patterns.js';
import { structuredListsHeuristic } from './structured-lists.js';
import { splitSentences, trimSentence, isQuestion, normalizeQuotes } from './text.js';

/**
 * Nothing blocks the server on hostile text: every function that runs patterns or the tokenizer
 * on user text stays linear on the worst inputs found (32,000-character sentences of one
 * repeated character class, behind the openings the extractors look for). The bound is per
 * character and generous for a loaded 2-core machine: the quadratic versions took 0.4 to 0.5 s
 * (15 µs a character) on these inputs, the linear ones well under 1 µs.
 */
const N = 32_000;
const MAX_MICROSECONDS_PER_CHAR = 2;

const runs = {
  letters: 'a'.repeat(N),
  whitespace: ' '.repeat(N),
  'spaced commas': ' ,'.repeat(N / 2),
  quotes: `"'`.repeat(N / 2),
  dots: 'a.'.repeat(N / 2),
  digits: '1 '.repeat(N / 2),
  'favourite, repeated': 'favourite '.repeat(N / 10),
  'possessives, repeated': "his her Rose's ".repeat(N / 15),
  unicode: '😀é'.repeat(N / 3),
};
const openings = [
  '',
  'Rose loved ',
  "Rose's favourite song was ",
  'Her favourite ',
  'I love ',
  'My favourite food is ',
  'I remember ',
];
const inputs = openings.flatMap((opening) =>
  Object.entries(runs).map(([name, run]) => ({
    name: `${JSON.stringify(opening)} + ${name}`,
    text: `${opening}${run}x.`,
  })),
);

const turn = (content: string) => [{ role: 'USER', content, turnIndex: 0 }] as never;
const entryPoints: Record<string, (text: string) => unknown> = {
  'fact extraction': (s) => extractFactsHeuristic('Rose', turn(s)),
  'memory extraction': (s) => extractMemoriesHeuristic({ userTurn: s }),
  'extractive summary': (s) => summarizeExtractive(turn(s)),
  'structured lists': (s) => structuredListsHeuristic(turn(s), []),
  'sentence split': (s) => splitSentences(s),
  'sentence trim': (s) => trimSentence(s),
  'question test': (s) => isQuestion(s),
  'quote normalizing': (s) => normalizeQuotes(s),
  identifiers: (s) => query.extractIdentifiers(s),
  'refer-back cues': (s) => query.refersBack(s),
  'query words': (s) => query.queryWords(s),
  'trigram probes': (s) => query.trigramProbes(s),
  'code query': (s) => query.isCodeQuery(s),
  'time expressions': (s) => parseTimeExpression(s, new Date('2026-01-01T00:00:00Z'), 'UTC'),
  'memory normalizing': (s) => canonicalFirstPerson(normalizeMemory(s)),
  'memory slots': (s) => slotOf(s),
  chunking: (s) => chunkMessage(s, { maxTokens: 500 } as never),
  'fact normalizing': (s) => tidyFact(normalizeFact(s)),
  'fact features': (s) => factFeatures(s, new Set(['rose'])),
  'token count': (s) => countTokens(s),
  'token truncation': (s) => truncateToTokens(s, 100),
};

describe('hostile text', () => {
  it.each(Object.keys(entryPoints))('%s stays linear on the worst inputs', (name) => {
    const fn = entryPoints[name];
    fn('warm up the patterns and the tokenizer.');
    const slow: string[] = [];
    for (const input of inputs) {
      const started = performance.now();
      fn(input.text);
      const perChar = ((performance.now() - started) * 1000) / input.text.length;
      if (perChar > MAX_MICROSECONDS_PER_CHAR)
        slow.push(`${input.name}: ${perChar.toFixed(2)} µs/char`);
    }
    expect(slow).toEqual([]);
  });

  it('counts tokens of ordinary text exactly as the tokenizer does', () => {
    const texts = [
      'Grandpa Joe fixed clocks in his shed every Sunday, humming "Moon River".',
      'Ship it: `export function parseDate(input: string): Date { return new Date(input); }`',
      '奶奶的花园里有很多玫瑰。 We planted them in 1961 — forty-two bushes!',
      `${'word '.repeat(500)}and a final sentence.`,
    ];
    for (const text of texts) expect(countTokens(text)).toBe(countO200k(text));
  });

  it('truncates a long run to a prefix that fits', () => {
    const text = `Start ${'a'.repeat(N)} end`;
    const cut = truncateToTokens(text, 50);
    expect(text.startsWith(cut)).toBe(true);
    expect(countTokens(cut)).toBeLessThanOrEqual(50);
    expect(cut.length).toBeGreaterThan(50);
  });
});
