/**
 * Whether a reply drew on a memory: it repeats enough of the memory's distinctive words (Han
 * characters as pairs, since Chinese has no spaces). Measured the same way in both A/B arms (in
 * the holdout, against the memories that would have been given), so the difference between the
 * arms is what giving them changed.
 */
const STOP_WORDS = new Set(
  (
    'the and for are but not you your yours with this that these those have has had was were ' +
    'will would can could should from they them their there then than what when where which who ' +
    'whom why how all any each few more most other some such only own same too very just also ' +
    'into onto about above after again against before below between both during further here ' +
    'once over under until while because been being does did doing his her hers him she its ' +
    'our ours out off our ourselves myself yourself himself herself itself themselves user ' +
    'likes like really always never often usually every much many one two lot lots something ' +
    'anything nothing everything remember remembers said says told tell know knows'
  ).split(' '),
);

const HAN = /\p{Script=Han}/u;

/** Distinctive terms: words of three letters or more that are not stop words, Han bigrams. */
export function contentTerms(text: string): Set<string> {
  const terms = new Set<string>();
  const normalized = text.normalize('NFKC').toLowerCase();
  for (const word of normalized.match(/[\p{L}\p{N}']+/gu) ?? []) {
    const chars = [...word];
    if (chars.some((c) => HAN.test(c))) {
      const han = chars.filter((c) => HAN.test(c));
      for (let i = 0; i + 1 < han.length; i++) terms.add(han[i] + han[i + 1]);
      const rest = chars.filter((c) => !HAN.test(c)).join('');
      if (rest.length >= 3 && !STOP_WORDS.has(rest)) terms.add(rest);
      continue;
    }
    const w = word.replace(/'s$/, '').replace(/'/g, '');
    if (w.length >= 3 && !STOP_WORDS.has(w)) terms.add(w);
  }
  return terms;
}

/** A memory is referenced when the reply holds 40% of its terms (at least 1, at most 3 needed). */
export function referencesMemory(reply: string, memory: string): boolean {
  const wanted = contentTerms(memory);
  if (wanted.size === 0) return false;
  const said = contentTerms(reply);
  let found = 0;
  for (const term of wanted) if (said.has(term)) found++;
  return found >= Math.min(3, Math.max(1, Math.ceil(wanted.size * 0.4)));
}

/** Whether the reply referenced any of the memories. */
export function referencesAnyMemory(reply: string, memories: readonly string[]): boolean {
  return memories.some((m) => referencesMemory(reply, m));
}
