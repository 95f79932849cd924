import { LegacyFact, StructuredSummary, SummaryTurn } from '../language-model.js';
import { extractMemoriesHeuristic } from './memory-patterns.js';
import {
  isAboutAssistant,
  isLogistics,
  isQuestion,
  normalizeQuotes,
  splitSentences,
  trimSentence,
} from './text.js';

const DECISION =
  /\b((i|we)('ve| have)? decided|we('re| are) going to|we('ll| will) (be )?|let's (not )?[a-z]+|we agreed|i('ve| have) made up my mind)\b/i;
const TODO =
  /\b((i|we) (need|have|ought|got) to|i should|remind me to|don't forget to|i('m| am) going to|i('ll| will) (call|write|visit|ask|send|find|look|buy|book|plan|make|bring|print|frame|scan|upload|record|finish|start|clean|sort|organi[sz]e|collect|share))\b/i;

const NOT_ENTITIES = new Set(
  `I I'm I've I'd I'll The A An My Our His Her He She It We They You Your This That These Those Then
  There When What Where Why How Who And But So Or If Yes No Oh Well Okay OK Thanks Thank Please Also
  Mom Mum Dad Grandpa Grandma Nana Papa Mother Father Monday Tuesday Wednesday Thursday Friday
  Saturday Sunday January February March April May June July August September October November
  December Christmas Easter Anyway Actually Honestly Sorry Hi Hello Hey Just Maybe Today Tomorrow
  Yesterday Tonight Every Sometimes Always Never User Assistant At In On Of For From To With By
  After Before During Since Until Does Did Do Was Were Is Are Has Had Have Can Could Would Will`.split(
    /\s+/,
  ),
);

/** Capitalised words and runs of them that are not sentence openers or common words. */
export function entitiesOf(sentence: string): string[] {
  const out: string[] = [];
  const re = /\b([A-Z][a-zA-Z'’-]+(?:\s+(?:of\s+|de\s+|van\s+)?[A-Z][a-zA-Z'’-]+){0,3})/g;
  for (let m = re.exec(sentence); m; m = re.exec(sentence)) {
    let words = m[1].replace(/['’]s$/, '').split(/\s+/);
    // A sentence's first word is capitalised anyway: keep it only inside a longer run.
    if (m.index === 0 && words.length === 1) continue;
    while (words.length > 0 && NOT_ENTITIES.has(words[0])) words = words.slice(1);
    const entity = words.join(' ');
    if (entity && !NOT_ENTITIES.has(entity) && entity.length > 1) out.push(entity);
  }
  return out;
}

function pushUnique(list: string[], item: string, max: number): void {
  const text = item.slice(0, 500);
  if (list.length >= max || list.some((x) => x.toLowerCase() === text.toLowerCase())) return;
  list.push(text);
}

/** HEURISTIC lists for `structured`: sentences matched by keyword, names by capitalisation. */
export function structuredListsHeuristic(
  turns: SummaryTurn[],
  facts: LegacyFact[],
): StructuredSummary {
  const out: StructuredSummary = {
    facts: [],
    preferences: [],
    decisions: [],
    todos: [],
    entities: [],
  };
  for (const fact of facts) {
    pushUnique(out.facts, fact.content, 30);
    if (fact.category === 'PREFERENCE' || fact.category === 'HOBBY') {
      pushUnique(out.preferences, fact.content, 30);
    }
  }
  for (const turn of turns) {
    for (const raw of splitSentences(turn.content)) {
      const sentence = trimSentence(normalizeQuotes(raw));
      for (const entity of entitiesOf(sentence)) pushUnique(out.entities, entity, 50);
      if (turn.role !== 'USER' || isQuestion(sentence) || isLogistics(sentence)) continue;
      if (isAboutAssistant(sentence)) continue;
      if (DECISION.test(sentence)) pushUnique(out.decisions, sentence, 30);
      else if (TODO.test(sentence)) pushUnique(out.todos, sentence, 30);
    }
    if (turn.role !== 'USER') continue;
    for (const memory of extractMemoriesHeuristic({ userTurn: turn.content })) {
      if (memory.type === 'PREFERENCE') pushUnique(out.preferences, memory.content, 30);
      if (memory.type === 'FACT' || memory.type === 'RELATIONSHIP') {
        pushUnique(out.facts, memory.content, 30);
      }
    }
  }
  return out;
}
