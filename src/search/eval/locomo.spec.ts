import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  aggregate,
  diaIdsOf,
  formatTable,
  LocomoQuestion,
  flatRecall,
  flattenRanked,
  parseFloor,
  percentile,
  readDataset,
  scoreQuestion,
  toImportedMessage,
} from './locomo.js';

const Q: LocomoQuestion = {
  qid: 'c#1',
  conv_id: 'c',
  category: 1,
  question: 'q',
  evidence_turns: ['D1:2', 'D3:1'],
  evidence_sessions: [1, 3],
};

describe('LoCoMo scoring', () => {
  it('scores turn-level recall at 5 and 10, NDCG@10 and session-level recall at 5', () => {
    const results = [['D2:1'], ['D1:2'], [], ['D2:2'], ['D2:3'], ['D2:4'], ['D3:1']];
    const s = scoreQuestion(results, Q);
    expect(s.r5).toBe(0.5);
    expect(s.r10).toBe(1);
    const dcg = 1 / Math.log2(3) + 1 / Math.log2(8);
    expect(s.ndcg10).toBeCloseTo(dcg / (1 + 1 / Math.log2(3)), 10);
    expect(s.sessionR5).toBe(0.5);
    // Sessions 2, 1, 2, 2, 2, 3: the first five distinct sessions reach session 3.
    expect(s.distinctSessionR5).toBe(1);
  });

  it('puts every turn a result cites at its rank, and counts each evidence turn once', () => {
    const s = scoreQuestion([['D1:1', 'D1:2', 'D3:1'], ['D1:2']], Q);
    expect(s).toEqual({
      r5: 1,
      r10: 1,
      ndcg10: 1,
      sessionR5: 1,
      distinctSessionR5: 1,
      flatR5: 1,
      flatR10: 1,
    });
  });

  it('averages by category, over 1-5 and over 1-4, as percentages', () => {
    const rows = aggregate([
      {
        question: { ...Q, category: 1, category_name: 'multi-hop' },
        scores: {
          r5: 1,
          r10: 1,
          ndcg10: 1,
          sessionR5: 1,
          distinctSessionR5: 1,
          flatR5: 1,
          flatR10: 1,
        },
      },
      {
        question: { ...Q, category: 5 },
        scores: {
          r5: 0,
          r10: 0.5,
          ndcg10: 0,
          sessionR5: 0,
          distinctSessionR5: 0,
          flatR5: 0,
          flatR10: 0.5,
        },
      },
    ]);
    expect(rows.map((r) => [r.label, r.questions, r.r5, r.r10])).toEqual([
      ['1 multi-hop', 1, 100, 100],
      ['5', 1, 0, 50],
      ['all (1-5)', 2, 50, 75],
      ['1-4', 1, 100, 100],
    ]);
  });

  it("labels other data sets' categories without LoCoMo's 1-4", () => {
    const scores = {
      r5: 1,
      r10: 1,
      ndcg10: 1,
      sessionR5: 1,
      distinctSessionR5: 1,
      flatR5: 1,
      flatR10: 1,
    };
    const rows = aggregate([
      { question: { ...Q, category: 2 }, scores },
      { question: { ...Q, category: 10 }, scores },
    ]);
    expect(rows.map((r) => r.label)).toEqual(['2', '10', 'all (2-10)']);
  });

  it('maps metadata to dia_ids and imports turns with theirs', () => {
    expect(
      diaIdsOf([{ dia_id: 'D1:1' }, { other: 1 }, { dia_id: 'D1:1' }, { dia_id: 'D1:2' }]),
    ).toEqual(['D1:1', 'D1:2']);
    const turn = {
      conv_id: 'c',
      session: 2,
      timestamp: '2023-05-08T13:56:00',
      turn_index: 0,
      dia_id: 'D2:1',
      speaker: 'Mel',
      text: 'Look at this!',
      blip_caption: 'a photo of a dog',
    };
    expect(toImportedMessage(turn, 'Caroline')).toEqual({
      role: 'ASSISTANT',
      content: 'Look at this!',
      occurredAt: '2023-05-08T13:56:00.000Z',
      metadata: { dia_id: 'D2:1', speaker: 'Mel', session: 2, image_caption: 'a photo of a dog' },
    });
    expect(toImportedMessage({ ...turn, speaker: 'Caroline' }, 'Caroline').role).toBe('USER');
  });

  it('reads a directory in the LoCoMo layout and the README floor', () => {
    const dir = mkdtempSync(join(tmpdir(), 'locomo-'));
    try {
      writeFileSync(
        join(dir, 'turns.jsonl'),
        [
          {
            conv_id: 'c',
            session: 1,
            timestamp: 't',
            turn_index: 1,
            dia_id: 'D1:2',
            speaker: 'B',
            text: 'b',
          },
          {
            conv_id: 'c',
            session: 1,
            timestamp: 't',
            turn_index: 0,
            dia_id: 'D1:1',
            speaker: 'A',
            text: 'a',
          },
        ]
          .map((l) => JSON.stringify(l))
          .join('\n'),
      );
      writeFileSync(
        join(dir, 'qrels.jsonl'),
        [Q, { ...Q, qid: 'c#2', evidence_turns: [] }]
          .map((l) => JSON.stringify({ ...l, conv_id: 'c' }))
          .join('\n'),
      );
      writeFileSync(
        join(dir, 'README.md'),
        '| retriever | R@5 | R@10 |\n|---|---|---|\n| BM25 on text | 46.8 | 54.6 | x |\n\n' +
          'Session level, BM25 on this half: R@5 79.8 is the floor.\n',
      );
      const data = readDataset(dir);
      expect(data.conversations.get('c')!.map((t) => t.dia_id)).toEqual(['D1:1', 'D1:2']);
      expect(data.questions.map((q) => q.qid)).toEqual(['c#1']);
      expect(data.skipped).toBe(1);
      expect(data.floor).toEqual({
        retriever: 'BM25 on text',
        r5: 46.8,
        r10: 54.6,
        sessionR5: 79.8,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(parseFloor('no table')).toBeNull();
    expect(
      parseFloor(
        '## Floor\nBM25 over the turns, the question as the query: over the 176 questions\n' +
          'with evidence, turn-level Recall@5 28.6, Recall@10 36.2, NDCG@10 28.1.\n\n' +
          '| system | R@5 | R@10 |\n|---|---|---|\n| BM25 on the question | 35.7 | 43.4 |',
      ),
    ).toEqual({
      retriever: 'BM25 over the turns, the question as the query',
      r5: 28.6,
      r10: 36.2,
      sessionR5: null,
    });
    expect(parseFloor('| BM25 | 1 | 2 | x |')).toEqual({
      retriever: 'BM25',
      r5: 1,
      r10: 2,
      sessionR5: null,
    });
  });

  it('writes the run file as every cited turn once, at its first rank, and scores it flat', () => {
    const results = [['D2:1', 'D2:2', 'D2:3', 'D2:4'], [], ['D2:1', 'D1:2'], ['D3:1']];
    const ranked = flattenRanked(results);
    expect(ranked).toEqual(['D2:1', 'D2:2', 'D2:3', 'D2:4', 'D1:2', 'D3:1']);
    expect(flatRecall(ranked, Q, 5)).toBe(0.5);
    expect(flatRecall(ranked, Q, 10)).toBe(1);
    // Grouped, the summary holds one rank, so both evidence turns are within the top 5.
    expect(scoreQuestion(results, Q).r5).toBe(1);
  });

  it('formats percentiles and tables', () => {
    expect(percentile([5, 1, 3, 2, 4], 50)).toBe(3);
    expect(percentile([5, 1, 3, 2, 4], 95)).toBe(5);
    expect(formatTable([{ a: 'x', b: '1' }])).toBe('| a | b |\n|---|---|\n| x | 1 |');
  });
});
