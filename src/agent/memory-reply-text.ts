import type { MemoryEntity } from '../memories/memory.entity.js';
import { MemorySaveOutcome } from '../memories/memory.enums.js';
import type { SaveResult } from '../memories/memory-writer.service.js';

/**
 * The replies to memory commands said in chat when no language model writes them: plain
 * statements of what was done, in the language the command was given in.
 */
export type ReplyLanguage = 'en' | 'zh';

export function languageOf(text: string): ReplyLanguage {
  return /[\u3400-\u9fff]/.test(text) ? 'zh' : 'en';
}

export interface RecalledLine {
  sourceType: string;
  text: string;
}

const SOURCE_LABEL: Record<ReplyLanguage, Record<string, string>> = {
  en: {
    MEMORY: 'Memory',
    FACT: 'Fact',
    STORY: 'Story',
    PERIOD_SUMMARY: 'Looking back',
    SUMMARY: 'Conversation summary',
    TURN: 'You said',
  },
  zh: {
    MEMORY: '记忆',
    FACT: '事实',
    STORY: '故事',
    PERIOD_SUMMARY: '回顾',
    SUMMARY: '对话摘要',
    TURN: '你说过',
  },
};

function clip(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function when(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function savedText(lang: ReplyLanguage, result: SaveResult): string {
  const content = clip(result.memory.content);
  if (lang === 'zh') {
    if (result.outcome === MemorySaveOutcome.MERGED) return `我已经记得这件事了：“${content}”`;
    const replaced =
      result.outcome === MemorySaveOutcome.SUPERSEDED ? '它取代了我之前记得的说法。' : '';
    return `好的，我记住了：“${content}”。${replaced}（说“别记住这个”即可撤销。）`;
  }
  if (result.outcome === MemorySaveOutcome.MERGED) {
    return `I already remember that: "${content}" I've noted that you told me again.`;
  }
  const replaced =
    result.outcome === MemorySaveOutcome.SUPERSEDED ? ' It replaces what I remembered before.' : '';
  return `Saved to your memories: "${content}"${replaced} (Reply "don't remember that" to undo.)`;
}

/** Says the consent refusal as it was given by the memories module, or its Chinese form. */
export function notSavedText(lang: ReplyLanguage, reason: string, message: string): string {
  if (lang === 'en') return message;
  if (reason === 'MEMORY_PAUSED') return '你的记忆功能已暂停，所以我没有保存任何内容。';
  if (reason === 'REMEMBER_OFF') return '这个对话的“记住”开关已关闭，所以我没有保存任何内容。';
  return `没有保存：${message}`;
}

export function forgottenText(
  lang: ReplyLanguage,
  memories: MemoryEntity[],
  restorableUntil: Date | null,
  about: string | null,
): string {
  if (memories.length === 0) {
    if (lang === 'zh') {
      return about
        ? `我没有找到关于“${clip(about, 80)}”的记忆，所以没有忘记任何内容。`
        : '你上一条消息没有留下任何记忆；以后我也不会从中记住什么。';
    }
    return about
      ? `I couldn't find any memories about "${clip(about, 80)}", so nothing was forgotten.`
      : "Nothing was remembered from your previous message, and nothing will be: there's nothing to forget.";
  }
  const lines = memories.map((m) => `- "${clip(m.content)}"`);
  if (lang === 'zh') {
    return [
      `我已经忘记了这些记忆：`,
      ...lines,
      restorableUntil ? `在 ${when(restorableUntil)} 之前可以恢复（restoreMemory）。` : '',
    ]
      .filter(Boolean)
      .join('\n');
  }
  return [
    `I've forgotten ${memories.length === 1 ? 'this memory' : `these ${memories.length} memories`}:`,
    ...lines,
    restorableUntil
      ? `You can restore ${memories.length === 1 ? 'it' : 'them'} until ${when(restorableUntil)} (restoreMemory).`
      : '',
  ]
    .filter(Boolean)
    .join('\n');
}

export function recalledText(lang: ReplyLanguage, query: string, items: RecalledLine[]): string {
  const about = clip(query, 80);
  if (items.length === 0) {
    return lang === 'zh'
      ? `关于“${about}”，我还没有记得任何内容。`
      : `I don't remember anything about "${about}" yet.`;
  }
  const labels = SOURCE_LABEL[lang];
  const lines = items.map((i) => `- ${labels[i.sourceType] ?? i.sourceType}: ${clip(i.text)}`);
  const head =
    lang === 'zh' ? `关于“${about}”，我记得：` : `Here is what I remember about "${about}":`;
  return [head, ...lines].join('\n');
}

export function failedText(lang: ReplyLanguage): string {
  return lang === 'zh'
    ? '抱歉，刚才没能处理你的记忆请求，请稍后再试。'
    : "I'm sorry, I couldn't carry out that memory request just now. Please try again in a moment.";
}

/**
 * What a command did, said in a together conversation: every participant reads the reply, so it
 * names no memory and nothing recalled (the speaker finds them, with Undo, in `memoryActions`
 * and on their memories page).
 */
export function privateCommandText(
  lang: ReplyLanguage,
  kind: 'SAVED' | 'FORGOTTEN' | 'LOOKUP',
  count: number,
): string {
  if (lang === 'zh') {
    if (kind === 'SAVED') return '好的，我已经记下了（只有你能在“记忆”里看到它）。';
    if (kind === 'FORGOTTEN')
      return count === 0
        ? '没有找到可以忘记的记忆。'
        : `我已经忘记了 ${count} 条记忆；你可以在“记忆”里查看并恢复。`;
    return '这个对话里还有其他人，所以我不在这里说出我记得的关于你的内容；请在你自己的对话或“回忆”页面里问我。';
  }
  if (kind === 'SAVED') return 'Saved to your memories (only you see them, on your memories page).';
  if (kind === 'FORGOTTEN')
    return count === 0
      ? 'I found no memory to forget.'
      : `I've forgotten ${count === 1 ? 'one memory' : `${count} memories`} of yours; you can see and restore ${count === 1 ? 'it' : 'them'} on your memories page.`;
  return 'Others take part in this conversation, so what I remember about you stays off it: ask me in a conversation of your own, or on your recall page.';
}
