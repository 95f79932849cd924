import { MemoryEntity } from './memory.entity.js';
import {
  ConversationMode,
  MemoryHistoryAction,
  MemorySource,
  MemoryStatus,
  MemoryType,
} from './memory.enums.js';
import { parseImport, toCsvExport, toExported, toJsonExport } from './memory-export.js';

const memory: MemoryEntity = {
  id: '2b9a8a70-8d0a-4f8e-9c55-1f5a1c1e0a01',
  userId: 'u',
  legacyId: null,
  type: MemoryType.PREFERENCE,
  content: '=cmd|"quoted", and a comma',
  normalized: 'x',
  slotKey: null,
  slotValue: null,
  confidence: 0.72000003,
  source: MemorySource.CHAT,
  conversationId: null,
  sourceMessageId: null,
  sourceTurnIndex: 4,
  conversationMode: ConversationMode.AGENT,
  sourceReference: null,
  referenceCount: 3,
  lastReferencedAt: new Date('2025-01-02T03:04:05.000Z'),
  status: MemoryStatus.ARCHIVED,
  validFrom: new Date('2025-01-01T00:00:00.000Z'),
  validTo: null,
  supersededBy: null,
  archivedAt: new Date('2025-02-01T00:00:00.000Z'),
  archiveReason: null,
  deletedAt: null,
  history: [{ at: '2025-01-01T00:00:00.000Z', action: MemoryHistoryAction.CREATED }],
  createdAt: new Date('2025-01-01T00:00:00.000Z'),
  updatedAt: new Date('2025-02-01T00:00:00.000Z'),
};

describe('memory export and import', () => {
  it('round-trips the JSON form field for field', () => {
    const exported = toExported(memory);
    const [item] = parseImport(toJsonExport([exported], new Date()), {
      maxItems: 10,
      maxLength: 1000,
    });
    expect(item).toMatchObject({
      ref: memory.id,
      type: memory.type,
      content: memory.content,
      confidence: 0.72,
      status: MemoryStatus.ARCHIVED,
      sourceTurnIndex: 4,
      conversationMode: ConversationMode.AGENT,
      referenceCount: 3,
      lastReferencedAt: memory.lastReferencedAt,
      createdAt: memory.createdAt,
      history: memory.history,
    });
  });

  it('writes RFC 4180 CSV with every column and defuses spreadsheet formulas', () => {
    const csv = toCsvExport([toExported(memory)]);
    const [header, row] = csv.split('\r\n');
    expect(header.split(',')).toContain('history');
    expect(header.split(',')).toHaveLength(22);
    expect(row.startsWith(`${memory.id},PREFERENCE,"'=cmd|""quoted"", and a comma",0.72,`)).toBe(
      true,
    );
  });

  it('names the place of each problem', () => {
    const limits = { maxItems: 2, maxLength: 20 };
    const bad = (memories: unknown) => () => parseImport(JSON.stringify({ memories }), limits);
    expect(() => parseImport('{', limits)).toThrow('not valid JSON');
    expect(bad([{ content: 'ok', type: 'WISH' }])).toThrow('memories[0].type must be one of');
    expect(bad([{ content: 'ok' }, { content: '' }])).toThrow('memories[1].content');
    expect(bad([{ content: 'ok', confidence: 2 }])).toThrow('memories[0].confidence');
    expect(bad([{ content: 'x'.repeat(21) }])).toThrow('more than 20 characters');
    expect(bad([{ content: 'a' }, { content: 'b' }, { content: 'c' }])).toThrow('at most 2');
    expect(bad([{ content: 'ok', legacyId: 'nope' }])).toThrow('memories[0].legacyId');
  });

  it('accepts a bare list with defaults and drops malformed history entries', () => {
    const [item] = parseImport(
      JSON.stringify([
        { content: 'Likes tea', history: [{ at: 'yesterday', action: 'CREATED' }, 'x'] },
      ]),
      { maxItems: 5, maxLength: 100 },
    );
    expect(item).toMatchObject({
      type: MemoryType.FACT,
      confidence: 1,
      status: MemoryStatus.ACTIVE,
      referenceCount: 0,
      history: [],
    });
  });
});
