import { MemoryUsageRecorder } from '../../test/support/fake-openai/memory-usage.recorder.js';
import { SummaryTurn } from './language-model.js';
import { LocalLanguageModel, NO_MODEL_NOTICE } from './local-llm.provider.js';

const at = new Date('2025-03-01T12:00:00Z');
const user = (turnIndex: number, content: string): SummaryTurn => ({
  turnIndex,
  role: 'USER',
  content,
  occurredAt: at,
});
const assistant = (turnIndex: number, content: string): SummaryTurn => ({
  turnIndex,
  role: 'ASSISTANT',
  content,
  occurredAt: at,
});

describe('LocalLanguageModel (offline heuristics)', () => {
  let recorder: MemoryUsageRecorder;
  let llm: LocalLanguageModel;
  beforeEach(() => {
    recorder = new MemoryUsageRecorder();
    llm = new LocalLanguageModel(recorder);
  });

  describe('extractMemories', () => {
    const extract = async (userTurn: string, existingMemories?: string[]) =>
      (await llm.extractMemories({ userTurn, existingMemories })).memories;

    it.each([
      ['I want to write a book about my dad.', 'GOAL', 0.72],
      ['My goal is to run a marathon in his honour.', 'GOAL', 0.72],
      ['I work as a nurse in Leeds.', 'FACT', 0.74],
      ['I live in Porto with my two cats.', 'FACT', 0.74],
      ["I'm a teacher.", 'FACT', 0.74],
      ['My wife and I visit his grave together.', 'RELATIONSHIP', 0.73],
      ['I have two sisters.', 'RELATIONSHIP', 0.73],
      ['Every Sunday I call my mother.', 'PATTERN', 0.72],
      ['I always cry when I hear that song.', 'PATTERN', 0.66],
      ['I love gardening in the early morning.', 'PREFERENCE', 0.72],
      ['My favourite film is Casablanca.', 'PREFERENCE', 0.72],
      ['I enjoy long walks by the river.', 'PREFERENCE', 0.66],
      ["I feel so lost since he's gone.", 'EMOTION', 0.62],
      ['I miss him every single day.', 'EMOTION', 0.66],
    ])('%s -> %s %d', async (text, type, confidence) => {
      expect(await extract(text)).toEqual([{ content: text, type, confidence }]);
    });

    it('names a relative in a line of its own', async () => {
      expect(await extract('My sister Anna and I walk his old route every Sunday.')).toEqual([
        { content: "The user's sister is named Anna.", type: 'RELATIONSHIP', confidence: 0.75 },
        {
          content: 'My sister Anna and I walk his old route every Sunday.',
          type: 'PATTERN',
          confidence: 0.72,
        },
      ]);
    });

    it.each([
      'You are so helpful, thank you!',
      'This app is really slow today.',
      "I'll be back in 5 minutes.",
      'Let me get a coffee first.',
      'brb, phone is dying',
      'What should I do with his old tools?',
      'Do you think I should sell the house?',
      'If I had known, I would have visited more.',
      'I love that.',
      'I love you.',
      'Hello!',
      'The weather is nice.',
    ])('saves nothing from %p', async (text) => {
      expect(await extract(text)).toEqual([]);
    });

    it('keeps clear statements above the 0.7 threshold and vague ones below', async () => {
      const clear = await extract('I want to plant a tree for him. I live in Leeds.');
      expect(clear.every((m) => m.confidence >= 0.7)).toBe(true);
      const vague = await extract('I think I might want to move someday. I usually sleep badly.');
      expect(vague.length).toBeGreaterThan(0);
      expect(vague.every((m) => m.confidence < 0.7)).toBe(true);
      const tonight = await extract('I want to watch his favourite film tonight.');
      expect(tonight[0].confidence).toBeLessThan(0.7);
    });

    it('caps medical and financial statements at 0.4', async () => {
      const memories = await extract(
        'I want to pay off the mortgage he left. I feel anxious about my diagnosis.',
      );
      expect(memories).toHaveLength(2);
      expect(memories.every((m) => m.confidence <= 0.4)).toBe(true);
    });

    it('returns at most three, the most confident first, skipping known ones', async () => {
      const text =
        'I live in Leeds. I want to learn the piano. My brother is a pilot. I love jazz. I feel tired.';
      const memories = await extract(text, ['I live in Leeds.']);
      expect(memories.map((m) => m.type)).toEqual(['RELATIONSHIP', 'GOAL', 'PREFERENCE']);
    });

    it('never uses the assistant turn', async () => {
      const result = await llm.extractMemories({
        userTurn: 'Okay.',
        assistantTurn: 'I want to help you. I live in the cloud.',
      });
      expect(result.memories).toEqual([]);
    });

    it('records usage under the heuristic model id', async () => {
      const result = await llm.extractMemories({ userTurn: 'I live in Leeds.' });
      expect(result.call).toMatchObject({
        task: 'extractMemories',
        model: 'local:heuristic',
        attempts: 1,
        ok: true,
        promptVersion: 'extract-memories/2',
      });
      expect(recorder.calls).toEqual([result.call]);
    });
  });

  describe('summarizeTurns', () => {
    const turns: SummaryTurn[] = [
      user(
        10,
        "Hi again. I've been thinking about Dad's workshop today. He worked as a carpenter for thirty years in Leeds. The workshop still smells of sawdust and linseed oil.",
      ),
      assistant(11, 'That sounds like a place full of memories. What did he make there?'),
      user(
        12,
        'He built our kitchen table and half the furniture in the house. He loved fishing on Lake Windermere every summer. My brother Tom has his old fishing rods now.',
      ),
      assistant(13, 'It sounds like his hands were always busy, in the workshop or on the lake.'),
      user(
        14,
        'I think he was happiest in the workshop. I want to restore his old workbench this spring. Sorry, I need to go, my phone is dying.',
      ),
    ];

    it('picks 2-4 central sentences, verbatim and in order, deterministically', async () => {
      const a = await llm.summarizeTurns({ legacyName: 'Joe Miller', turns });
      const b = await llm.summarizeTurns({ legacyName: 'Joe Miller', turns });
      expect(a.summary).toBe(b.summary);
      const all = turns.map((t) => t.content).join(' ');
      const sentences = a.summary.match(/[^.!?]+[.!?]/g) ?? [];
      expect(sentences.length).toBeGreaterThanOrEqual(2);
      expect(sentences.length).toBeLessThanOrEqual(4);
      for (const s of sentences) expect(all).toContain(s.trim());
      expect(a.summary).toMatch(/workshop/);
      expect(a.summary).not.toMatch(/phone is dying/);
    });

    it('extracts facts about the legacy from the user turns', async () => {
      const result = await llm.summarizeTurns({ legacyName: 'Joe Miller', turns });
      expect(result.facts).toEqual([
        {
          content: 'Joe Miller worked as a carpenter for thirty years in Leeds.',
          category: 'OCCUPATION',
          confidence: 0.73,
          sourceTurnIndexes: [10],
        },
        {
          content: 'Joe Miller built our kitchen table and half the furniture in the house.',
          category: 'OTHER',
          confidence: 0.69,
          sourceTurnIndexes: [12],
        },
        {
          content: 'Joe Miller loved fishing on Lake Windermere every summer.',
          category: 'HOBBY',
          confidence: 0.71,
          sourceTurnIndexes: [12],
        },
      ]);
      expect(result.structured.entities).toEqual(
        expect.arrayContaining(['Leeds', 'Lake Windermere', 'Tom']),
      );
      expect(result.structured.todos).toEqual([]);
      expect(result.call).toMatchObject({ task: 'summarizeTurns', model: 'local:heuristic' });
    });

    it('resolves kinship words, names and pronouns, and skips known facts', async () => {
      const result = await llm.summarizeTurns({
        legacyName: 'Grandma Rose',
        existingFacts: ['Grandma Rose was born in Dublin.'],
        turns: [
          user(
            0,
            'Grandma was born in Dublin. Rose loved baking bread on Sundays. My uncle came by yesterday. He was a pilot. She was so stubborn! Her favourite flower was the tulip.',
          ),
        ],
      });
      expect(result.facts.map((f) => [f.content, f.category, f.confidence])).toEqual([
        ['Grandma Rose loved baking bread on Sundays.', 'HOBBY', 0.74],
        ['Grandma Rose was so stubborn!', 'PERSONALITY', 0.61],
        ["Grandma Rose's favourite flower was the tulip.", 'PREFERENCE', 0.74],
      ]);
    });

    it('ignores what the assistant says about the legacy', async () => {
      const result = await llm.summarizeTurns({
        legacyName: 'Joe',
        turns: [
          assistant(0, 'He worked as a teacher, I imagine. He loved music.'),
          user(1, 'Maybe.'),
        ],
      });
      expect(result.facts).toEqual([]);
    });

    it('refuses an empty span', async () => {
      await expect(llm.summarizeTurns({ legacyName: 'Joe', turns: [] })).rejects.toThrow(
        RangeError,
      );
    });
  });

  describe('reply', () => {
    const input = {
      // The layout of src/context's assembler: persona, then "## Title" and one item per line.
      system:
        'You are Keepsake, helping the user remember Joe.\n\n## What the family has shared about Joe\n- [occupation, shared] Joe was a carpenter.\nJoe loved fishing.\n\n## What you remember about the person you are talking with\n- The user lives in Leeds.',
      messages: [{ role: 'USER' as const, content: 'What did Dad do for a living?' }],
    };

    it('answers a question with what was retrieved, in a few plain lines, and says what it is', async () => {
      const result = await llm.reply(input);
      expect(result.text).toBe(
        [
          'Here is what Keepsake has that may help:',
          '- Joe was a carpenter.',
          '- Joe loved fishing.',
          '- The user lives in Leeds.',
          '',
          NO_MODEL_NOTICE,
        ].join('\n'),
      );
      expect(result.text).not.toMatch(/no language model is configured|Recent turns/i);
      expect(result.model).toBe('local:heuristic');
      expect(result.usage.promptTokens).toBeGreaterThan(0);
      expect(result.usage.completionTokens).toBeGreaterThan(0);
    });

    it('thanks the member for what they tell, bringing back something said before', async () => {
      const result = await llm.reply({
        ...input,
        messages: [{ role: 'USER', content: 'He built our kitchen table.' }],
      });
      expect(result.text.split('\n').slice(0, 2)).toEqual([
        'Thank you for telling me. I have kept it with the rest.',
        'It brings back something said before: “Joe was a carpenter.”',
      ]);
    });

    it('addresses the writer by name when the conversation says who spoke, and quotes no turn', async () => {
      const result = await llm.reply({
        ...input,
        messages: [
          { role: 'USER', content: 'Dad built boats.', speaker: 'Ana' },
          { role: 'ASSISTANT', content: 'Noted.' },
          { role: 'USER', content: 'Did he build sheds too?', speaker: 'Ben' },
        ],
      });
      expect(result.text.startsWith('Ben, here is what Keepsake has that may help:')).toBe(true);
      expect(result.text).not.toMatch(/Dad built boats|Ana/);
    });

    it('does not pass the persona off as something retrieved', async () => {
      const result = await llm.reply({ ...input, system: 'You are Keepsake, remembering Joe.' });
      expect(result.text).toContain(
        'Nothing you or your family have told Keepsake answers that yet.',
      );
      expect(result.text).not.toContain('remembering Joe');
    });

    it('streams the same text in a few deltas', async () => {
      const deltas: string[] = [];
      const result = await llm.reply(input, (d) => deltas.push(d));
      expect(deltas.length).toBeGreaterThanOrEqual(3);
      expect(deltas.join('')).toBe(result.text);
    });
  });
});
