/**
 * People, places and events named in what was said, for the offline heuristics: capitalised
 * names split into places (after "in", "at", "visited" ..., or ending in Road, Park, Bay ...)
 * and people, and the events people talk about when they remember someone (a wedding, a trip
 * to Lisbon, his retirement). Patterns, not understanding: English only.
 */

const LOCATIVE = /\b(?:in|at|to|from|near|visit(?:ed|ing)?|moved to|lived in|born in)\s+$/i;
/** Names that are places by their last word. */
const PLACE_WORD =
  /\s(?:Road|Street|St|Lane|Avenue|Ave|Park|Hill|Bay|Beach|Lake|River|Square|Bridge|Church|Hospital|School|Station|Harbour|Harbor|Island|Valley|Mountains?|County|City|Town)$/;
/** Days of the year, neither people nor places. */
const OCCASIONS =
  /^(?:Christmas(?: Day| Eve)?|Easter|Halloween|Bonfire Night|New Year(?:'s)?(?: Day| Eve)?|Thanksgiving|Hanukkah|Diwali|Eid|Passover|Boxing Day|Mother's Day|Father's Day)$/i;

/**
 * Names from a text, split into places and people; holidays are neither (they are events).
 */
export function splitNames(
  entities: string[],
  text: string,
): { people: string[]; places: string[] } {
  const people: string[] = [];
  const places: string[] = [];
  for (const name of entities) {
    if (OCCASIONS.test(name)) continue;
    const at = text.indexOf(name);
    const before = at > 0 ? text.slice(Math.max(0, at - 20), at) : '';
    (LOCATIVE.test(before) || PLACE_WORD.test(` ${name}`) ? places : people).push(name);
  }
  return { people, places };
}

const EVENT_NOUNS =
  'wedding|funeral|memorial|birthday(?: party)?|anniversary|christening|baptism|graduation|retirement|reunion|holiday|vacation|honeymoon|trip|journey|cruise|party|concert|recital|picnic|barbecue|camping trip|move|operation|accident|diagnosis|surgery|war|deployment|first day|last day';

/**
 * Events named in a sentence: "the wedding", "a trip to Lisbon", "his retirement", "Christmas"
 * (with the place or the time said right after it, when there is one).
 */
export function eventsIn(sentence: string): string[] {
  const out: string[] = [];
  const re = new RegExp(
    `\\b((?:(?:the|a|an|his|her|their|our|my|your)\\s+)?(?:[a-z]+\\s+)?(?:${EVENT_NOUNS}))\\b((?:\\s+(?:to|in|at|on)\\s+(?:the\\s+)?[A-Z][\\w'’-]+(?:\\s+[A-Z][\\w'’-]+)?)?)`,
    'g',
  );
  for (let m = re.exec(sentence); m; m = re.exec(sentence)) {
    out.push(`${m[1]}${m[2] ?? ''}`.trim());
  }
  for (const holiday of sentence.match(
    /\b(?:Christmas(?: Day| Eve)?|Easter|Thanksgiving|Hanukkah|Diwali|Eid|Passover|New Year(?:'s)?(?: Day| Eve)?)\b/g,
  ) ?? []) {
    out.push(holiday);
  }
  return out;
}
