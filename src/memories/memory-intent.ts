/**
 * Memory commands said in chat, recognised offline by clear patterns in English and Chinese.
 * Only a message that *is* a command counts: the patterns are anchored at the start of the
 * message (after politeness), so "I remember the beach" or "Do you remember his boat?" are
 * ordinary turns, never commands.
 */
export type MemoryIntent =
  /** "remember that I ...", "please remember ...", "记住我…", "请记住…" */
  | { kind: 'SAVE'; content: string }
  /** "forget what I said about X", "忘记我说的关于X" */
  | { kind: 'FORGET'; query: string }
  /** "don't remember that", "别记住这个": the previous user turn. */
  | { kind: 'FORGET_LAST' }
  /** "what do you remember about X?", "你记得关于X的什么" */
  | { kind: 'LOOKUP'; query: string };

const EN_POLITE = String.raw`^(?:(?:hey|hi|ok(?:ay)?|so|and|also|oh)[,!]?\s+)?(?:keepsake[,:]?\s+)?`;
const EN_ASK = String.raw`(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?`;
/** "Remember that time we ..." asks about a shared memory; it does not give one to keep. */
const EN_REMINISCE =
  /^(?:time|day|night|moment|trip|summer|winter|spring|autumn|fall|year|week|weekend|evening|morning|afternoon|party|holiday|vacation|christmas|birthday|song|place)\b/i;

const EN_SAVE = [
  new RegExp(`${EN_POLITE}${EN_ASK}remember\\s+that\\s+(.+)$`, 'is'),
  new RegExp(`${EN_POLITE}please\\s+remember[:,]?\\s+(.+)$`, 'is'),
  new RegExp(`${EN_POLITE}${EN_ASK}remember\\s*:\\s*(.+)$`, 'is'),
  new RegExp(
    `${EN_POLITE}${EN_ASK}(?:keep\\s+in\\s+mind|make\\s+a\\s+note)\\s+that\\s+(.+)$`,
    'is',
  ),
];
const EN_FORGET_LAST = [
  new RegExp(
    `${EN_POLITE}(?:please\\s+)?(?:don'?t|do\\s+not|never)\\s+(?:remember|save|keep)\\s+(?:that|this)(?:\\s+(?:one|please))?[.!]*$`,
    'i',
  ),
  new RegExp(`${EN_POLITE}${EN_ASK}forget\\s+(?:that|this)(?:\\s+(?:one|please))?[.!]*$`, 'i'),
  new RegExp(
    `${EN_POLITE}${EN_ASK}forget\\s+what\\s+I\\s+(?:just\\s+)?(?:said|told\\s+you)[.!]*$`,
    'i',
  ),
];
const EN_FORGET = [
  new RegExp(
    `${EN_POLITE}${EN_ASK}forget\\s+(?:what|everything|anything|all)\\s+(?:that\\s+)?I\\s+(?:have\\s+|'ve\\s+)?(?:said|told\\s+you|mentioned|shared)\\s+about\\s+(.+?)[.!?]*$`,
    'is',
  ),
  new RegExp(`${EN_POLITE}${EN_ASK}forget\\s+(?:everything\\s+)?about\\s+(.+?)[.!?]*$`, 'is'),
  new RegExp(`${EN_POLITE}${EN_ASK}forget\\s+that\\s+(.+?)[.!?]*$`, 'is'),
];
const EN_LOOKUP = [
  new RegExp(
    `${EN_POLITE}what\\s+(?:else\\s+)?(?:do|did)\\s+you\\s+(?:remember|recall|know)\\s+about\\s+(.+?)[.?!]*$`,
    'is',
  ),
  new RegExp(
    `${EN_POLITE}what\\s+(?:have|did)\\s+I\\s+(?:told|tell)\\s+you\\s+about\\s+(.+?)[.?!]*$`,
    'is',
  ),
  new RegExp(`${EN_POLITE}do\\s+you\\s+remember\\s+anything\\s+about\\s+(.+?)[.?!]*$`, 'is'),
];

const ZH_END = '[。！!.…～~]*';
const ZH_SAVE = [/^(?:请你?|麻烦你?|帮我)?记住[：:，,\s]*(.+)$/s];
const ZH_FORGET_LAST = [
  new RegExp(
    `^(?:请)?(?:别|不要|不用)(?:再)?记(?:住|下|着)?(?:这个|那个|这些|那些|这句|那句|它)(?:了|吧)?${ZH_END}$`,
  ),
  new RegExp(
    `^(?:请)?(?:忘记|忘掉|忘了)(?:这个|那个|这句话|刚才的话|我刚才说的(?:话)?)(?:吧)?${ZH_END}$`,
  ),
];
const ZH_FORGET = [
  new RegExp(
    `^(?:请)?(?:忘记|忘掉|忘了)(?:我|我之前|我以前)?(?:说过?的|讲过?的|告诉你的)?关于(.+?)的?(?:事情?|话|内容|一切|东西|那些)?(?:吧)?${ZH_END}$`,
    's',
  ),
];
const ZH_LOOKUP = [
  /^你(?:还)?记得关于(.+?)的(?:什么|哪些|些什么)(?:事情?|东西)?[？?吗呢]*$/s,
  /^关于(.+?)[，,]?\s*你(?:还)?记得(?:些)?什么[？?呢]*$/s,
];

function firstMatch(patterns: RegExp[], text: string): string | null | undefined {
  for (const p of patterns) {
    const m = p.exec(text);
    if (m) return m[1] ?? null;
  }
  return undefined;
}

function tidy(text: string): string {
  return text
    .trim()
    .replace(/^["“「『]+|["”」』]+$/g, '')
    .trim();
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The memory command this message is, or null for an ordinary turn. */
export function parseMemoryIntent(message: string): MemoryIntent | null {
  const text = message.trim().replace(/\s+/g, ' ').replace(/[‘’]/g, "'");
  if (!text) return null;

  if (firstMatch(EN_FORGET_LAST, text) !== undefined) return { kind: 'FORGET_LAST' };
  if (firstMatch(ZH_FORGET_LAST, text) !== undefined) return { kind: 'FORGET_LAST' };

  const lookup = firstMatch(EN_LOOKUP, text) ?? firstMatch(ZH_LOOKUP, text);
  if (lookup) {
    const query = tidy(lookup);
    if (query) return { kind: 'LOOKUP', query };
  }

  const forget = firstMatch(EN_FORGET, text) ?? firstMatch(ZH_FORGET, text);
  if (forget) {
    const query = tidy(forget);
    // "Forget about it" means "never mind"; "forget about that" points at the last turn.
    if (/^(?:it|him|her|them)$/i.test(query)) return null;
    if (/^(?:that|this|those|these)(?: one)?$/i.test(query)) return { kind: 'FORGET_LAST' };
    if (query) return { kind: 'FORGET', query };
  }

  const saved = firstMatch(EN_SAVE, text);
  if (saved) {
    const content = tidy(saved);
    // A question ("remember that I was there?") or reminiscing is not something to keep.
    if (content && !content.endsWith('?') && !EN_REMINISCE.test(content)) {
      return { kind: 'SAVE', content: capitalize(content) };
    }
    return null;
  }
  const zh = firstMatch(ZH_SAVE, text);
  if (zh) {
    const content = tidy(zh);
    // "记住了" (got it) and questions ("记住了吗？") are not commands.
    if (content.length >= 2 && !/^了[。！!.]*$/.test(content) && !/[？?吗]$/.test(content)) {
      return { kind: 'SAVE', content };
    }
  }
  return null;
}
