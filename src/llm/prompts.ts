import {
  ExtractMemoriesInput,
  PeriodSource,
  RewriteQueryInput,
  SummarizePeriodInput,
  SummarizeTurnsInput,
} from './language-model.js';
import { countTokens, truncateToTokens } from './tokenizer.js';

/**
 * Every prompt Keepsake sends, in one place. Bump a task's version whenever its wording
 * changes: it is recorded with each call, so output quality can be compared across versions.
 */
export const PROMPT_VERSION = {
  summarizeTurns: 'summarize-turns/2',
  extractMemories: 'extract-memories/2',
  summarizePeriod: 'summarize-period/2',
  rewriteQuery: 'rewrite-query/1',
  /** Replies use the caller's system prompt as is; the version covers the message layout. */
  reply: 'reply/1',
} as const;

/**
 * First line of each structured task's system prompt. Test doubles (the fake OpenAI server)
 * recognise the task by it when `response_format` carries no schema name.
 */
export const TASK_MARKER = {
  summarizeTurns: 'Keepsake task: summarize-turns',
  extractMemories: 'Keepsake task: extract-memories',
  summarizePeriod: 'Keepsake task: summarize-period',
  rewriteQuery: 'Keepsake task: rewrite-query',
} as const;

/** `response_format.json_schema.name` of each structured task. */
export const SCHEMA_NAME = {
  summarizeTurns: 'keepsake_turns_summary',
  extractMemories: 'keepsake_memories',
  summarizePeriod: 'keepsake_period_summary',
  rewriteQuery: 'keepsake_query_rewrite',
} as const;

/** Shared by both extraction prompts: what must never become a memory or a fact. */
const DO_NOT_SAVE = `Never save:
- opinions about the assistant or the app ("you're so helpful", "this app is slow", "you got that wrong");
- passing logistics ("I'll be back in 5 minutes", "let me get a coffee", "I have to go now");
- questions, greetings, thanks and small talk;
- anything only the assistant said, unless the user confirmed it.
Medical or financial details (diagnoses, medication, treatment, debts, income, account numbers): leave them out, or if they matter to the story give them a confidence of 0.4 or less.`;

/**
 * The example sentences the prompts show, as patterns with <PLACEHOLDERS>: a model that copies
 * one writes something no conversation said, which grounding.ts refuses (and a test checks
 * that none is ever stored).
 */
export const PROMPT_EXAMPLES: readonly string[] = [
  "<THE PERSON'S NAME> worked as a <JOB> for <NUMBER> years.",
  "The user's <RELATIVE> lives in <PLACE>.",
  'The user has a <RELATIVE> named <NAME>.',
  'The user and their <RELATIVE> <NAME> <DO SOMETHING> every <DAY>.',
  'The user keeps returning to <A HABIT OF THE PERSON>.',
];

export interface ChatPrompt {
  system: string;
  user: string;
}

export function summarizeTurnsPrompt(input: SummarizeTurnsInput): ChatPrompt {
  const name = input.legacyName;
  const system = `${TASK_MARKER.summarizeTurns} (${PROMPT_VERSION.summarizeTurns})
You summarize a span of a conversation in Keepsake, where a user talks with an assistant about ${name}, a person the user is remembering. Reply with one JSON object and nothing else.

Fields:
- "summary": 2 to 4 plain sentences naming the key topics and the emotional tone of the span. Third person ("The user ..."). Nothing that is not in the span.
- "structured": short strings taken from the span: "facts" (anything stated as fact, about anyone), "preferences" (likes and dislikes), "decisions" (what someone decided), "todos" (what someone said they will do), "entities" (names of people, places, organisations, pets).
- "facts": facts about ${name} only, that the user stated or clearly implied. Each has:
  "content": one self-contained sentence naming ${name} (not "he" or "she");
  "category": PERSONALITY, HOBBY, RELATIONSHIP, MILESTONE (birth, marriage, moves, death, achievements), OCCUPATION, PREFERENCE, HABIT or OTHER;
  "confidence": 0.9 or more when stated plainly, about 0.7 when clearly implied, 0.5 or less when hedged ("I think", "maybe");
  "sourceTurnIndexes": the [turn N] numbers the fact comes from.
  Do not repeat a known fact, even reworded. An empty list is a fine answer.

${DO_NOT_SAVE}

Example, a pattern rather than a conversation (words in <ANGLE BRACKETS> stand for what the turns say; never copy them):
Turns: [turn <N>] USER: "<THE PERSON> was a <JOB> for <NUMBER> years. Anyway, <A COMPLIMENT TO THE ASSISTANT>."
Good fact: {"content": "<THE PERSON'S NAME> worked as a <JOB> for <NUMBER> years.", "category": "OCCUPATION", "confidence": 0.95, "sourceTurnIndexes": [<N>]}
Not a fact: the compliment (an opinion about the assistant).`;

  const known = (input.existingFacts ?? []).map((f) => `- ${f}`).join('\n') || '(none)';
  const turns = input.turns
    .map(
      (t) =>
        `[turn ${t.turnIndex}] ${t.role} (${t.occurredAt.toISOString()}): ${indentContinuation(t.content)}`,
    )
    .join('\n');
  const user = `Legacy: ${name}\nKnown facts:\n${known}\n\nConversation:\n${turns}`;
  return { system, user };
}

export function extractMemoriesPrompt(input: ExtractMemoriesInput): ChatPrompt {
  const system = `${TASK_MARKER.extractMemories} (${PROMPT_VERSION.extractMemories})
You pick out what is worth remembering about the USER from one exchange in Keepsake, so a later conversation can recall it. Reply with one JSON object and nothing else: {"memories": [...]}, 0 to 3 items.

Each memory:
- "content": one self-contained sentence about the user in the third person ("The user's <RELATIVE> lives in <PLACE>.").
- "type": FACT (lasting facts: work, home, family situation), EMOTION (how the user feels about something that matters), GOAL (what the user wants to do), PATTERN (what the user does regularly), RELATIONSHIP (people in the user's life), PREFERENCE (likes and dislikes).
- "confidence": 0.9 or more when stated plainly and lasting; 0.7 to 0.85 when clear; below 0.7 when vague, momentary or inferred (those are usually discarded).

Only what the user said about themselves or their life. Never anything about the assistant. Skip what is already in the known memories, even reworded. Most exchanges hold nothing worth remembering: then answer {"memories": []}.

${DO_NOT_SAVE}

Examples, patterns rather than conversations (words in <ANGLE BRACKETS> stand for what the user says; never copy them):
User: "<A COMPLIMENT TO THE ASSISTANT>" -> {"memories": []}
User: "<A PASSING ERRAND, BACK IN A MINUTE>" -> {"memories": []}
User: "<A QUESTION>" -> {"memories": []}
User: "My <RELATIVE> <NAME> and I <DO SOMETHING> every <DAY>." -> {"memories": [{"content": "The user has a <RELATIVE> named <NAME>.", "type": "RELATIONSHIP", "confidence": 0.9}, {"content": "The user and their <RELATIVE> <NAME> <DO SOMETHING> every <DAY>.", "type": "PATTERN", "confidence": 0.85}]}`;

  const known = (input.existingMemories ?? []).map((m) => `- ${m}`).join('\n') || '(none)';
  const assistant =
    input.assistantTurn === undefined
      ? ''
      : `\n\nAssistant turn:\n<<<\n${input.assistantTurn}\n>>>`;
  const user = `Known memories:\n${known}\n\nUser turn:\n<<<\n${input.userTurn}\n>>>${assistant}`;
  return { system, user };
}

/**
 * Bounds on what a period prompt carries, so a year of weekly summaries (or a month of busy
 * conversations) stays well inside a small local model's context whatever the caller passes.
 */
export const PERIOD_PROMPT_LIMITS = {
  /** Sources sent at most; the rest are left out, lowest weight and oldest first. */
  maxSources: 40,
  /** All rendered sources together. */
  maxSourceTokens: 12_000,
  /** One source's summary text. */
  textTokens: 300,
  /** The user's own words of a TURNS source: the most recent ones, each cut to this. */
  userTurns: 8,
  userTurnTokens: 80,
  /** Entries of each list (themes, people, ...) and characters per entry. */
  listItems: 10,
  listItemChars: 120,
} as const;

export function summarizePeriodPrompt(input: SummarizePeriodInput): ChatPrompt {
  const name = input.legacyName;
  const span = input.period.toLowerCase();
  const system = `${TASK_MARKER.summarizePeriod} (${PROMPT_VERSION.summarizePeriod})
You look back on one ${span} of a user's conversations in Keepsake, where the user talks with an assistant about ${name}, a person the user is remembering. Reply with one JSON object and nothing else.

The ${span} is given as sources, oldest first:
- CHUNK: the summary of part of a conversation;
- TURNS: what the user said in turns that no summary covers yet;
- WEEK, MONTH: the summary of a shorter period.
Each source has its local dates and a weight: the share of it that falls inside this ${span}. Weigh sources by it: a week with weight 0.43 only partly belongs to a month, so it counts for less than a week that lies wholly inside.

Fields:
- "summary": 3 to 6 plain sentences on what the user talked about and remembered over the ${span}, and how it felt. Third person ("The user ...").
- "emotionalTone": a short phrase for the overall tone ("warm and nostalgic", "grieving, with moments of humour").
- "keyThemes": at most 8 short themes, the most present first.
- "recurringPatterns": at most 5 short sentences on what came back across several conversations or weeks ("The user keeps returning to <A HABIT OF THE PERSON>.", with the sources' own words). One mention is not a pattern: an empty list is a fine answer.
- "people": names of people who came up, at most 15.
- "places": names of places that came up, at most 15.

Nothing that is not in the sources: no guesses and no general knowledge. Nothing about the assistant or the app.`;

  const { shown, leftOut } = pickPeriodSources(input.sources);
  const omitted = leftOut > 0 ? ` (${leftOut} more left out for length)` : '';
  const sources = shown.map((s, i) => renderPeriodSource(s, i + 1)).join('\n\n');
  const user =
    `Legacy: ${name}\nPeriod: ${input.period} ${input.start} to ${input.end}\n` +
    `Conversations: ${input.conversationCount}; turns: ${input.turnCount}\n` +
    `Sources: ${shown.length}${omitted}\n\n${sources}`;
  return { system, user };
}

/**
 * The sources that fit, in date order. Those that matter most to the period are kept first:
 * the highest weight (a week wholly inside a month before one at its edge), then the most recent.
 */
function pickPeriodSources(sources: PeriodSource[]): { shown: PeriodSource[]; leftOut: number } {
  const limits = PERIOD_PROMPT_LIMITS;
  const byImportance = [...sources].sort(
    (a, b) => b.weight - a.weight || b.to.localeCompare(a.to) || b.from.localeCompare(a.from),
  );
  const kept = new Set<PeriodSource>();
  let tokens = 0;
  for (const source of byImportance.slice(0, limits.maxSources)) {
    const cost = countTokens(renderPeriodSource(source, 0));
    // The first source always goes: a period summary from nothing would be invented.
    if (kept.size > 0 && tokens + cost > limits.maxSourceTokens) continue;
    kept.add(source);
    tokens += cost;
  }
  const shown = sources
    .filter((s) => kept.has(s))
    .sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
  return { shown, leftOut: sources.length - shown.length };
}

function renderPeriodSource(source: PeriodSource, n: number): string {
  const limits = PERIOD_PROMPT_LIMITS;
  // Two decimals are enough to weigh by, and keep 0.428571... readable.
  const weight = Number(source.weight.toFixed(2));
  const lines = [`[source ${n}] ${source.kind} ${source.from} to ${source.to}, weight ${weight}`];
  const text = source.text.trim();
  if (text) {
    const label = source.kind === 'TURNS' ? 'Text' : 'Summary';
    lines.push(`${label}: ${indentContinuation(capTokens(text, limits.textTokens))}`);
  }
  if (source.emotionalTone?.trim()) lines.push(`Tone: ${capList([source.emotionalTone])[0]}`);
  const lists: [string, string[]][] = [
    ['Themes', source.themes],
    ['Patterns', source.patterns],
    ['People', source.people],
    ['Places', source.places],
  ];
  for (const [label, items] of lists) {
    const capped = capList(items);
    if (capped.length > 0) lines.push(`${label}: ${capped.join('; ')}`);
  }
  const said = source.userTurns.filter((t) => t.trim().length > 0);
  if (said.length > 0) {
    const recent = said.slice(-limits.userTurns);
    const earlier = said.length - recent.length;
    lines.push(earlier > 0 ? `User said (last ${recent.length} of ${said.length}):` : 'User said:');
    for (const turn of recent) {
      lines.push(`- ${indentContinuation(capTokens(turn.trim(), limits.userTurnTokens))}`);
    }
  }
  return lines.join('\n');
}

/** Cut text is marked, so the model does not take a cut sentence for the whole thought. */
function capTokens(text: string, maxTokens: number): string {
  const cut = truncateToTokens(text, maxTokens);
  return cut.length < text.length ? `${cut.trimEnd()} […]` : text;
}

/** One line per list: entries are flattened, and kept few and short. */
function capList(items: string[]): string[] {
  const max = PERIOD_PROMPT_LIMITS.listItemChars;
  return items
    .map((item) => item.replace(/\s+/g, ' ').trim())
    .filter((item) => item.length > 0)
    .slice(0, PERIOD_PROMPT_LIMITS.listItems)
    .map((item) => (item.length > max ? `${item.slice(0, max).trimEnd()} […]` : item));
}

/** Continuation lines are indented so each turn stays one visually distinct entry. */
function indentContinuation(content: string): string {
  return content.replace(/\r?\n/g, '\n    ');
}

/** What a recall question is searched with besides itself (SEARCH_QUERY_REWRITE). */
export function rewriteQueryPrompt(input: RewriteQueryInput): ChatPrompt {
  const name = input.legacyName;
  const system = `${TASK_MARKER.rewriteQuery} (${PROMPT_VERSION.rewriteQuery})
In Keepsake a user talks with an assistant about ${name}, a person the user is remembering, and later asks what was said. You help search those conversations for one question. You have not seen them. Reply with one JSON object and nothing else.

Fields:
- "answer": one to three short sentences that could be what someone said in the conversations to answer the question, in plain first-person chat words ("We went camping at the lake last summer."). Invent plausible details; they are only used to find similar turns, never shown.
- "subQuestions": when the question asks several things (two people, two events, "both", a comparison, an order), one short self-contained question per thing, at most 3. Otherwise an empty list.`;
  return { system, user: `Question: ${input.question.slice(0, 2000)}` };
}
