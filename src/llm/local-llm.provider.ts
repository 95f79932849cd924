import { addressedName } from '../identity/display-name.js';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { extractMemoriesHeuristic } from './heuristics/memory-patterns.js';
import { extractFactsHeuristic } from './heuristics/fact-patterns.js';
import { summarizeExtractive } from './heuristics/extractive-summarizer.js';
import { structuredListsHeuristic } from './heuristics/structured-lists.js';
import { summarizePeriodHeuristic } from './heuristics/period-aggregate.js';
import {
  ExtractMemoriesInput,
  ExtractedMemories,
  LanguageModel,
  PeriodSummaryText,
  Reply,
  ReplyInput,
  SummarizePeriodInput,
  SummarizeTurnsInput,
  TurnsSummary,
  WithCall,
} from './language-model.js';
import { ModelOutputError } from './model.errors.js';
import { LlmTask, ModelCall, ModelUsageRecorder, reportCall } from './model-usage.js';
import { PROMPT_VERSION } from './prompts.js';
import { MEMORIES_SCHEMA, PERIOD_SUMMARY_SCHEMA, TURNS_SUMMARY_SCHEMA } from './task-schemas.js';
import { JsonSchema, validateJson } from './json-schema-lite.js';
import { countTokens } from './tokenizer.js';

export const LOCAL_LLM_MODEL_ID = 'local:heuristic';

/**
 * The offline default (LLM=local). Not a language model: deterministic HEURISTICS, named as
 * such in `modelId`. Summaries are extractive (the most central sentences, verbatim), facts and
 * memories come from sentence patterns over the member's own words with modest confidences, and
 * replies are a few plain sentences built from what was retrieved, saying what they are.
 */
export class LocalLanguageModel implements LanguageModel {
  readonly modelId = LOCAL_LLM_MODEL_ID;
  readonly generates = false;
  readonly acceptsTools = false;

  constructor(private readonly recorder: ModelUsageRecorder) {}

  async summarizeTurns(input: SummarizeTurnsInput): Promise<WithCall<TurnsSummary>> {
    const started = performance.now();
    if (input.turns.length === 0) throw new RangeError('summarizeTurns needs at least one turn');
    const sentences = summarizeExtractive(input.turns);
    const facts = extractFactsHeuristic(input.legacyName, input.turns, input.existingFacts);
    const result: TurnsSummary = {
      summary: sentences
        .map((s) => s.text)
        .join(' ')
        .slice(0, 2000),
      structured: structuredListsHeuristic(input.turns, facts),
      facts,
    };
    const promptText = input.turns.map((t) => t.content).join('\n');
    return {
      ...result,
      call: this.finish('summarizeTurns', started, result, TURNS_SUMMARY_SCHEMA, promptText),
    };
  }

  async extractMemories(input: ExtractMemoriesInput): Promise<WithCall<ExtractedMemories>> {
    const started = performance.now();
    const result: ExtractedMemories = { memories: extractMemoriesHeuristic(input) };
    const promptText = `${input.userTurn}\n${input.assistantTurn ?? ''}`;
    return {
      ...result,
      call: this.finish('extractMemories', started, result, MEMORIES_SCHEMA, promptText),
    };
  }

  async summarizePeriod(input: SummarizePeriodInput): Promise<WithCall<PeriodSummaryText>> {
    const started = performance.now();
    if (input.sources.length === 0)
      throw new RangeError('summarizePeriod needs at least one source');
    const result = summarizePeriodHeuristic(input);
    const promptText = input.sources.map((s) => s.text).join('\n');
    return {
      ...result,
      call: this.finish('summarizePeriod', started, result, PERIOD_SUMMARY_SCHEMA, promptText),
    };
  }

  async reply(input: ReplyInput, onDelta?: (text: string) => void): Promise<WithCall<Reply>> {
    const started = performance.now();
    const text = localReplyText(input);
    if (onDelta) {
      // A few deltas, each on its own tick, so the streaming path is exercised offline too.
      for (const delta of chunk(text, 4)) {
        await yieldToLoop();
        onDelta(delta);
      }
    }
    const promptTokens =
      countTokens(input.system) + input.messages.reduce((n, m) => n + countTokens(m.content), 0);
    const completionTokens = countTokens(text);
    const call = this.record('reply', started, promptTokens, completionTokens);
    return {
      text,
      model: this.modelId,
      usage: { promptTokens, completionTokens },
      finishReason: 'stop',
      call,
    };
  }

  /** The heuristics' output passes the same validation as a model's, or it is a bug. */
  private finish(
    task: LlmTask,
    started: number,
    result: object,
    schema: JsonSchema,
    promptText: string,
  ): ModelCall {
    const problems = validateJson(schema, result);
    if (problems.length > 0) {
      const details = { task, model: this.modelId, attempts: 1 };
      this.record(task, started, 0, 0, `invalid heuristic output: ${problems[0]}`);
      throw new ModelOutputError('The local heuristics produced invalid output', details, problems);
    }
    return this.record(task, started, countTokens(promptText), countTokens(JSON.stringify(result)));
  }

  private record(
    task: LlmTask,
    started: number,
    promptTokens: number,
    completionTokens: number,
    error?: string,
  ): ModelCall {
    const call: ModelCall = {
      task,
      model: this.modelId,
      promptTokens,
      completionTokens,
      durationMs: Math.round(performance.now() - started),
      attempts: 1,
      ok: error === undefined,
      error,
      promptVersion: PROMPT_VERSION[task],
      usageEstimated: true,
    };
    reportCall(this.recorder, call);
    return call;
  }
}

/** Markdown headings (`## Memories`) or lines ending in a colon (`Memories:`) open a section. */
const HEADING = /^\s*(?:#{1,6}\s+(.+?)\s*#*\s*|([A-Z][\w '’()/-]{1,60}):\s*)$/;

interface Section {
  title: string;
  headed: boolean;
  lines: string[];
}

function sectionsOf(system: string): Section[] {
  const sections: Section[] = [];
  let current: Section | null = null;
  for (const line of system.split(/\r?\n/)) {
    const heading = HEADING.exec(line);
    if (heading) {
      current = { title: (heading[1] ?? heading[2]).trim(), headed: true, lines: [] };
      sections.push(current);
    } else if (line.trim()) {
      if (!current) {
        current = { title: 'Context', headed: false, lines: [] };
        sections.push(current);
      }
      current.lines.push(line.trim());
    }
  }
  return sections.filter((s) => s.lines.length > 0);
}

const clip = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;

/**
 * What the offline reply says of itself, once, at its end: it was put together from what was
 * said, not written by a model.
 */
export const NO_MODEL_NOTICE =
  '(Keepsake is running without a language model, so this reply is put together from what has been said, not written for you.)';

/** Items of a retrieved section worth repeating back: the facts, memories, stories and turns. */
const MAX_ITEMS_QUESTION = 3;

const QUESTION =
  /\?\s*$|^(?:who|what|when|where|why|how|which|did|do|does|was|were|is|are|can|could|would|will|have|has)\b/i;

/**
 * The honest offline reply (LLM=local): no generation, but a few plain sentences a family can
 * read. A question is answered with what Keepsake has that bears on it (the retrieved items the
 * prompt would have given a model, most relevant first); anything else is thanked for and, when
 * something said before comes close, that is brought back. It ends by saying what it is.
 */
export function localReplyText(input: ReplyInput): string {
  const last = [...input.messages].reverse().find((m) => m.role === 'USER');
  // The text before the first heading is the persona: instructions, not something retrieved.
  const items = sectionsOf(input.system)
    .filter((s) => s.headed)
    .flatMap((s) =>
      s.lines.map((l) => l.replace(/^([-*•]|\d+[.)])\s+/, '').replace(/^\[[^\]]*\]\s*/, '')),
    )
    .filter((item) => item.length > 0 && (!last || item.trim() !== last.content.trim()));
  // Addressed by name when the conversation names its speakers ("A member" names no one).
  const name = last?.speaker ? addressedName(last.speaker) : '';
  const to = name && name !== 'A member' ? `${name}, ` : '';
  const said = last?.content.trim() ?? '';
  const lines: string[] = [];
  if (QUESTION.test(said)) {
    if (items.length === 0) {
      lines.push(
        `${capitalize(`${to}nothing you or your family have told Keepsake answers that yet.`)} If you tell me, I will keep it.`,
      );
    } else {
      lines.push(capitalize(`${to}here is what Keepsake has that may help:`));
      for (const item of items.slice(0, MAX_ITEMS_QUESTION)) lines.push(`- ${clip(item, 220)}`);
    }
  } else {
    lines.push(capitalize(`${to}thank you for telling me. I have kept it with the rest.`));
    if (items.length > 0)
      lines.push(`It brings back something said before: “${clip(items[0], 220)}”`);
  }
  lines.push('', NO_MODEL_NOTICE);
  return lines.join('\n');
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Splits at line breaks into about `parts` pieces that concatenate back to `text`. */
function chunk(text: string, parts: number): string[] {
  const lines = text.split(/(?<=\n)/);
  const size = Math.ceil(lines.length / parts);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i += size) out.push(lines.slice(i, i + size).join(''));
  return out;
}
