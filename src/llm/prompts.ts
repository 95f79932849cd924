import { ExtractMemoriesInput, SummarizeTurnsInput } from './language-model.js';

/**
 * Every prompt Keepsake sends, in one place. Bump a task's version whenever its wording
 * changes: it is recorded with each call, so output quality can be compared across versions.
 */
export const PROMPT_VERSION = {
  summarizeTurns: 'summarize-turns/1',
  extractMemories: 'extract-memories/1',
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
} as const;

/** `response_format.json_schema.name` of each structured task. */
export const SCHEMA_NAME = {
  summarizeTurns: 'keepsake_turns_summary',
  extractMemories: 'keepsake_memories',
} as const;

/** Shared by both extraction prompts: what must never become a memory or a fact. */
const DO_NOT_SAVE = `Never save:
- opinions about the assistant or the app ("you're so helpful", "this app is slow", "you got that wrong");
- passing logistics ("I'll be back in 5 minutes", "let me get a coffee", "I have to go now");
- questions, greetings, thanks and small talk;
- anything only the assistant said, unless the user confirmed it.
Medical or financial details (diagnoses, medication, treatment, debts, income, account numbers): leave them out, or if they matter to the story give them a confidence of 0.4 or less.`;

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

Example. Turns: [turn 4] USER: "Dad was a carpenter for thirty years, he built our kitchen table. Anyway, you're a great listener." [turn 5] ASSISTANT: "That table must hold a lot of memories."
Good fact: {"content": "${name} worked as a carpenter for thirty years.", "category": "OCCUPATION", "confidence": 0.95, "sourceTurnIndexes": [4]}
Not a fact: "The assistant is a great listener." (an opinion about the assistant).`;

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
- "content": one self-contained sentence about the user in the third person ("The user's sister Anna lives in Lisbon.").
- "type": FACT (lasting facts: work, home, family situation), EMOTION (how the user feels about something that matters), GOAL (what the user wants to do), PATTERN (what the user does regularly), RELATIONSHIP (people in the user's life), PREFERENCE (likes and dislikes).
- "confidence": 0.9 or more when stated plainly and lasting; 0.7 to 0.85 when clear; below 0.7 when vague, momentary or inferred (those are usually discarded).

Only what the user said about themselves or their life. Never anything about the assistant. Skip what is already in the known memories, even reworded. Most exchanges hold nothing worth remembering: then answer {"memories": []}.

${DO_NOT_SAVE}

Examples:
User: "You're honestly more helpful than my therapist, thanks!" -> {"memories": []}
User: "Hang on, let me grab a coffee, back in 5." -> {"memories": []}
User: "What year did the war end?" -> {"memories": []}
User: "My sister Anna and I walk Dad's old route every Sunday." -> {"memories": [{"content": "The user has a sister named Anna.", "type": "RELATIONSHIP", "confidence": 0.9}, {"content": "The user and their sister Anna walk their late father's old route every Sunday.", "type": "PATTERN", "confidence": 0.85}]}`;

  const known = (input.existingMemories ?? []).map((m) => `- ${m}`).join('\n') || '(none)';
  const assistant =
    input.assistantTurn === undefined
      ? ''
      : `\n\nAssistant turn:\n<<<\n${input.assistantTurn}\n>>>`;
  const user = `Known memories:\n${known}\n\nUser turn:\n<<<\n${input.userTurn}\n>>>${assistant}`;
  return { system, user };
}

/** Continuation lines are indented so each turn stays one visually distinct entry. */
function indentContinuation(content: string): string {
  return content.replace(/\r?\n/g, '\n    ');
}
