import { countO200k } from '../../../test/support/raw-tokenizer.js';
import { normalizeMemory, canonicalFirstPerson, slotOf } from '../../memories/memory-text.js';
import { factFeatures, normalizeFact, tidyFact } from '../../facts/fact-relations.js';
import { chunkMessage } from '../../search/chunker.js';
import * as query from '../../search/query-analysis.js';
import { parseTimeExpression } from '../../search/time-expressions.js';
import { isForgotComplaint } from '../../signals/forgot-complaint.js';
import { referencesMemory } from '../../signals/memory-reference.js';
import { countTokens, truncateToTokens } from '../tokenizer.js';
import { summarizeExtractive } from './extractive-summarizer.js';
import { extractFactsHeuristic } from './fact-patterns.js';
import { extractMemoriesHeuristic } from './memory-patterns.js';
import { structuredListsHeuristic } from './structured-lists.js';
import { splitSentences, trimSentence, isQuestion, normalizeQuotes } from './text.js';

/**
 * Nothing blocks the server on hostile text: every function that runs patterns or the tokenizer
 * on user text stays linear on the worst inputs found (sentences of one repeated character
 * class, behind the openings the extractors look for). Each input is timed at 8,000 and at
 * 32,000 characters (best of three): four times the text may take at most ten times as long
 * (a quadratic function takes sixteen times) unless it is too fast to matter. Growth, not a
 * time, so that a loaded machine does not fail it: the quadratic versions took 0.4 to 0.5 s on
 * 32,000 characters, the linear ones a few milliseconds.
 */
const SMALL = 8_000;
const LARGE = 32_000;
/** Below this, timings are noise on a loaded machine and nothing blocks anyway. */
const NEGLIGIBLE_MS = 60;

const runs: Record<string, (n: number) => string> = {
  letters: (n) => 'a'.repeat(n),
  whitespace: (n) => ' '.repeat(n),
  'spaced commas': (n) => ' ,'.repeat(n / 2),
  quotes: (n) => `"'`.repeat(n / 2),
  dots: (n) => 'a.'.repeat(n / 2),
  digits: (n) => '1 '.repeat(n / 2),
  'favourite, repeated': (n) => 'favourite '.repeat(n / 10),
  'possessives, repeated': (n) => "his her Rose's ".repeat(n / 15),
  unicode: (n) => '😀é'.repeat(n / 3),
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
    text: (n: number) => `${opening}${run(n)}x.`,
  })),
);

/**
 * Best of three runs of each size, the sizes taken in turn so that both see the same load, each
 * run on a slightly different length: the tokenizer caches the encoding of a piece it has seen,
 * so the same text again would time the cache.
 */
function bestOf(
  runs: number,
  fn: (n: number) => unknown,
  small: number,
  large: number,
): [number, number] {
  const best = [Infinity, Infinity];
  for (let i = 0; i < runs; i++) {
    for (const [k, n] of [small, large].entries()) {
      const started = performance.now();
      fn(n + 6 * i);
      best[k] = Math.min(best[k], performance.now() - started);
    }
  }
  return [best[0], best[1]];
}

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
  'forgot complaints': (s) => isForgotComplaint(s) || isForgotComplaint(`I already told you ${s}`),
  'forgot complaints (Chinese)': (s) => isForgotComplaint(`我已经跟你${s}你又忘${s}`),
  'memory references': (s) => referencesMemory(s, `- ${s}`),
};

describe('hostile text', () => {
  it.each(Object.keys(entryPoints))('%s stays linear on the worst inputs', (name) => {
    const fn = entryPoints[name];
    fn('warm up the patterns and the tokenizer.');
    const slow: string[] = [];
    for (const input of inputs) {
      const measure = (runs: number) => bestOf(runs, (n) => fn(input.text(n)), SMALL, LARGE);
      const tooSlow = ([small, large]: [number, number]) =>
        large > NEGLIGIBLE_MS && large > 10 * Math.max(small, 0.1);
      let [smallMs, largeMs] = measure(3);
      // A pause of the collector or a busy machine can stretch one size's every run: a case
      // that looks slow is measured again, longer; a quadratic one stays slow (16x and more).
      if (tooSlow([smallMs, largeMs])) [smallMs, largeMs] = measure(7);
      if (tooSlow([smallMs, largeMs])) {
        slow.push(`${input.name}: ${smallMs.toFixed(1)} ms, then ${largeMs.toFixed(1)} ms`);
      }
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
    const text = `Start ${'a'.repeat(LARGE)} end`;
    const cut = truncateToTokens(text, 50);
    expect(text.startsWith(cut)).toBe(true);
    expect(countTokens(cut)).toBeLessThanOrEqual(50);
    expect(cut.length).toBeGreaterThan(50);
  });
});
