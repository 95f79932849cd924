import type { MemoryEntity } from '../memories/memory.entity.js';
import { MemorySaveOutcome } from '../memories/memory.enums.js';
import {
  forgottenText,
  languageOf,
  notSavedText,
  recalledText,
  savedText,
} from './memory-reply-text.js';

const memory = (content: string) => ({ id: 'm1', content }) as MemoryEntity;

describe('replies to memory commands', () => {
  it('answers in the language of the command', () => {
    expect(languageOf('Remember that I love tea')).toBe('en');
    expect(languageOf('记住我喜欢喝茶')).toBe('zh');
  });

  it('says what was saved, merged or superseded', () => {
    const saved = (outcome: MemorySaveOutcome) =>
      savedText('en', { outcome, memory: memory('I love tea.'), superseded: [] });
    expect(saved(MemorySaveOutcome.CREATED)).toBe(
      'Saved to your memories: "I love tea." (Reply "don\'t remember that" to undo.)',
    );
    expect(saved(MemorySaveOutcome.MERGED)).toMatch(/^I already remember that/);
    expect(saved(MemorySaveOutcome.SUPERSEDED)).toMatch(/It replaces what I remembered before/);
  });

  it('passes on the consent refusal', () => {
    expect(notSavedText('en', 'MEMORY_PAUSED', 'Your memory is paused.')).toBe(
      'Your memory is paused.',
    );
    expect(notSavedText('zh', 'REMEMBER_OFF', 'x')).toMatch(/开关已关闭/);
  });

  it('lists what was forgotten with the undo deadline', () => {
    const until = new Date('2026-12-02T10:30:00Z');
    expect(forgottenText('en', [memory('I work nights.')], until, 'work')).toBe(
      'I\'ve forgotten this memory:\n- "I work nights."\nYou can restore it until 2026-12-02 10:30 UTC (restoreMemory).',
    );
    expect(forgottenText('en', [], null, 'work')).toMatch(
      /couldn't find any memories about "work"/,
    );
    expect(forgottenText('zh', [], null, null)).toMatch(/上一条消息/);
  });

  it('lists recalled items by source', () => {
    expect(
      recalledText('en', 'tea', [
        { sourceType: 'MEMORY', text: 'I love tea.' },
        { sourceType: 'TURN', text: 'We drank   tea.' },
      ]),
    ).toBe(
      'Here is what I remember about "tea":\n- Memory: I love tea.\n- You said: We drank tea.',
    );
    expect(recalledText('zh', '茶', [])).toBe('关于“茶”，我还没有记得任何内容。');
  });
});
