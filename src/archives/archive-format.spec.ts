import { ArchiveException } from './archive.exception.js';
import { ARCHIVE_FORMAT, PART_PATHS, PARTS, parseLine, parseManifest } from './archive-format.js';

const manifest = (changes: Record<string, unknown> = {}) =>
  JSON.stringify({
    format: ARCHIVE_FORMAT,
    version: 1,
    exportedAt: '2026-11-28T10:00:00.000Z',
    exportedBy: { id: 'u1', displayName: 'Ruth' },
    legacy: {
      id: 'l1',
      name: 'Grandpa Joe',
      description: null,
      bornOn: '1930-04-02',
      diedOn: null,
      persona: null,
      createdAt: '2026-01-01T00:00:00.000Z',
    },
    people: [{ id: 'u1', displayName: 'Ruth' }],
    parts: Object.fromEntries(PARTS.map((p) => [p, { path: PART_PATHS[p], count: 0 }])),
    storyBytes: 0,
    ...changes,
  });

const limits = { maxMessageChars: 100, maxStoryChars: 50 };

function refusal(fn: () => unknown): { reason: string; field?: string; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ArchiveException);
    const e = err as ArchiveException;
    return { reason: e.reason, field: e.field, message: e.message };
  }
  throw new Error('not refused');
}

describe('archive format', () => {
  it('reads a manifest of this version', () => {
    expect(parseManifest(manifest())).toMatchObject({
      version: 1,
      legacy: { name: 'Grandpa Joe' },
    });
  });

  it('refuses another format, a later version, and a part where it does not belong', () => {
    expect(refusal(() => parseManifest(manifest({ format: 'zip' })))).toMatchObject({
      reason: 'UNSUPPORTED_ARCHIVE',
      field: 'format',
    });
    expect(refusal(() => parseManifest(manifest({ version: 3 })))).toMatchObject({
      reason: 'UNSUPPORTED_ARCHIVE',
      field: 'version',
    });
    expect(refusal(() => parseManifest('{'))).toMatchObject({ reason: 'INVALID_ARCHIVE' });
    const parts = Object.fromEntries(PARTS.map((p) => [p, { path: PART_PATHS[p], count: 0 }]));
    expect(
      refusal(() =>
        parseManifest(manifest({ parts: { ...parts, facts: { path: '../facts', count: 0 } } })),
      ).message,
    ).toContain('parts.facts.path');
  });

  it('reads a line and names the place of a bad one', () => {
    const turn = {
      id: 't1',
      conversationId: 'c1',
      turnIndex: 0,
      role: 'USER',
      authorId: 'u1',
      content: 'He grew tomatoes.',
      metadata: {},
      placeholder: false,
      withheld: false,
      occurredAt: '2025-06-02T17:00:00Z',
      createdAt: '2025-06-02T17:00:00Z',
    };
    expect(parseLine('turns', JSON.stringify(turn), 1, limits)).toMatchObject({
      content: 'He grew tomatoes.',
      occurredAt: '2025-06-02T17:00:00.000Z',
    });
    expect(
      refusal(() => parseLine('turns', JSON.stringify({ ...turn, role: 'ROBOT' }), 7, limits))
        .message,
    ).toBe('data/turns.jsonl, line 7: role must be one of USER, ASSISTANT');
    expect(
      refusal(() =>
        parseLine('turns', JSON.stringify({ ...turn, content: 'x'.repeat(101) }), 2, limits),
      ).message,
    ).toContain('content has more than 100 characters');
    expect(refusal(() => parseLine('facts', 'not json', 3, limits)).message).toBe(
      'data/facts.jsonl, line 3: not valid JSON',
    );
  });

  it('holds a story to its text limit and its file to stories/', () => {
    const story = {
      id: 's1',
      authorId: 'u1',
      title: 'The tin box',
      kind: 'STORY',
      format: 'MARKDOWN',
      visibility: 'PRIVATE',
      occurredAt: null,
      createdAt: '2025-06-02T17:00:00Z',
      updatedAt: '2025-06-02T17:00:00Z',
      fileName: null,
      mimeType: null,
      sizeBytes: 10,
      file: 'stories/s1/The tin box.md',
      pages: [{ number: 1, text: 'Plum cake.' }],
    };
    expect(parseLine('stories', JSON.stringify(story), 1, limits)).toMatchObject({
      title: 'The tin box',
    });
    const long = {
      ...story,
      pages: [
        { number: 1, text: 'x'.repeat(30) },
        { number: 2, text: 'y'.repeat(30) },
      ],
    };
    expect(refusal(() => parseLine('stories', JSON.stringify(long), 1, limits)).message).toContain(
      'DOCUMENT_MAX_CHARS',
    );
    expect(
      refusal(() =>
        parseLine('stories', JSON.stringify({ ...story, file: 'keepsake.json' }), 1, limits),
      ).message,
    ).toContain('under stories/');
  });

  it('refuses, naming the field, what PostgreSQL could not keep', () => {
    const fact = {
      id: 'f1',
      authorId: 'u1',
      content: 'He grew tomatoes.',
      category: 'HOBBY',
      visibility: 'PRIVATE',
      status: 'ACTIVE',
      confidence: 1,
      mentionCount: 1,
      validFrom: '2025-06-02T17:00:00Z',
      validTo: null,
      supersededBy: null,
      createdAt: '2025-06-02T17:00:00Z',
      updatedAt: '2025-06-02T17:00:00Z',
    };
    const refused = (changes: Record<string, unknown>) =>
      refusal(() => parseLine('facts', JSON.stringify({ ...fact, ...changes }), 4, limits));
    expect(refused({ validFrom: '-100000-01-01T00:00:00.000Z' }).message).toBe(
      'data/facts.jsonl, line 4: validFrom is not a date Keepsake can keep ("-100000-01-01T00:00:00.000Z"): its year must be from 1 to 9999',
    );
    expect(refused({ createdAt: '+275760-09-13T00:00:00.000Z' }).message).toContain('createdAt');
    expect(refused({ content: 'a\u0000b' }).message).toBe(
      'data/facts.jsonl, line 4: content holds a NUL character (\\u0000), which no text kept by Keepsake can hold',
    );
    expect(refused({ content: 'half \ud83d of a face' }).message).toContain(
      'content holds half of a character',
    );
    expect(refused({ content: '   ' }).message).toBe('data/facts.jsonl, line 4: content is empty');
    expect(refused({ extra: { deep: ['x\u0000'] } }).message).toContain(
      'extra.deep[0] holds a NUL',
    );
    // A whole character from the astral planes is text like any other.
    expect(
      parseLine('facts', JSON.stringify({ ...fact, content: 'Grew 🍅 all summer.' }), 1, limits),
    ).toMatchObject({
      content: 'Grew 🍅 all summer.',
    });
  });

  it('refuses a manifest whose legacy PostgreSQL could not keep, naming the field', () => {
    const legacy = JSON.parse(manifest()).legacy as Record<string, unknown>;
    const refused = (changes: Record<string, unknown>) =>
      refusal(() => parseManifest(manifest({ legacy: { ...legacy, ...changes } }))).message;
    expect(refused({ bornOn: '1930-02-30' })).toBe(
      'keepsake.json: legacy.bornOn must be a date (YYYY-MM-DD) that exists',
    );
    expect(refused({ name: 'Joe\u0000' })).toBe(
      'keepsake.json: legacy.name holds a NUL character (\\u0000), which no text kept by Keepsake can hold',
    );
    expect(refused({ name: ' ' })).toBe('keepsake.json: legacy.name is empty');
  });

  it('refuses a period summary of a day or time zone that does not exist', () => {
    const summary = {
      id: 'p1',
      period: 'WEEK',
      start: '2025-06-02',
      end: '2025-06-08',
      timeZone: 'Europe/London',
      startsAt: '2025-06-01T23:00:00Z',
      endsAt: '2025-06-08T23:00:00Z',
      summary: 'A week of tomatoes.',
      conversationCount: 1,
      turnCount: 2,
      model: 'heuristic',
      createdAt: '2025-06-09T00:00:00Z',
      updatedAt: '2025-06-09T00:00:00Z',
    };
    const line = (changes: Record<string, unknown>) =>
      parseLine('periodSummaries', JSON.stringify({ ...summary, ...changes }), 2, limits);
    expect(line({})).toMatchObject({ start: '2025-06-02', timeZone: 'Europe/London' });
    expect(refusal(() => line({ end: '2025-13-40' })).message).toBe(
      'data/period-summaries.jsonl, line 2: end must be a date (YYYY-MM-DD) that exists',
    );
    expect(refusal(() => line({ timeZone: 'Mars/Olympus' })).message).toContain(
      'timeZone is not a time zone',
    );
  });
});
