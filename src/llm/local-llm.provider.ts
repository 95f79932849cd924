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

export const NO_MODEL_NOTICE =
  'No language model is configured, so this is not a generated answer. Here is what Keepsake has for this conversation:';

/**
 * The offline default (LLM=local). Not a language model: deterministic HEURISTICS, named as
 * such in `modelId`. Summaries are extractive (the most central sentences, verbatim), facts and
 * memories come from sentence patterns with modest confidences, and replies say plainly that
 * nothing was generated, then list what Keepsake retrieved.
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
 * The honest offline reply: no generation, only what the prompt would have given a model. Each
 * line of a headed section is one retrieved item; text before the first heading (the persona)
 * is not retrieved material and is left out unless there are no headings at all.
 */
export function localReplyText(input: ReplyInput): string {
  const lines: string[] = [NO_MODEL_NOTICE, ''];
  // The text before the first heading is the persona: instructions, not something retrieved.
  const sections = sectionsOf(input.system).filter((s) => s.headed);
  if (sections.length === 0) lines.push('Nothing has been retrieved for this message yet.');
  for (const section of sections) {
    const items = section.lines.map((l) => l.replace(/^([-*•]|\d+[.)])\s+/, ''));
    lines.push(`${section.title}:`);
    for (const item of items.slice(0, 5)) lines.push(`- ${clip(item, 200)}`);
    if (items.length > 5) lines.push(`- … and ${items.length - 5} more`);
  }
  const recent = input.messages.slice(-4);
  if (recent.length > 0) {
    lines.push('', 'Recent turns:');
    for (const m of recent) {
      const who = m.role === 'USER' ? (m.speaker ?? 'You') : 'Assistant';
      lines.push(`- ${who}: ${clip(m.content.replace(/\s+/g, ' '), 160)}`);
    }
  }
  return lines.join('\n');
}

/** Splits at line breaks into about `parts` pieces that concatenate back to `text`. */
function chunk(text: string, parts: number): string[] {
  const lines = text.split(/(?<=\n)/);
  const size = Math.ceil(lines.length / parts);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i += size) out.push(lines.slice(i, i + size).join(''));
  return out;
}
