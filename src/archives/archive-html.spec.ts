import { escapeHtml, factItem, hrefOf, pageStart, turnItem } from './archive-html.js';
import { safeFileName } from './archive-format.js';

describe('archive pages', () => {
  it('escapes every text it shows', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
      '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;',
    );
    const people = new Map([['u1', '<b>Ruth</b>']]);
    const html = factItem(
      {
        id: 'f1',
        authorId: 'u1',
        content: '<script>alert(1)</script>',
        category: 'HOBBY' as never,
        visibility: 'SHARED' as never,
        status: 'ACTIVE' as never,
        confidence: 1,
        mentionCount: 1,
        validFrom: '2025-01-01T00:00:00.000Z',
        validTo: null,
        supersededBy: null,
        createdAt: '2025-01-01T00:00:00.000Z',
        updatedAt: '2025-01-01T00:00:00.000Z',
      },
      people,
    );
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('runs no script and fetches nothing: a policy says so to the browser', () => {
    const head = pageStart('Grandpa "Joe"', 1);
    expect(head).toContain(
      `content="default-src 'none'; style-src 'unsafe-inline'; img-src 'self'"`,
    );
    expect(head).toContain('<title>Grandpa &quot;Joe&quot;</title>');
    expect(head).toContain('href="../index.html"');
    expect(head).not.toMatch(/<script|https?:/);
  });

  it('links files inside the ZIP by relative, encoded paths', () => {
    expect(hrefOf('stories/s1/Grand-mère #1.pdf')).toBe('stories/s1/Grand-m%C3%A8re%20%231.pdf');
  });

  it('names a withheld reply as a note, and whom the agent answered', () => {
    const html = turnItem(
      {
        id: 't1',
        conversationId: 'c1',
        turnIndex: 3,
        role: 'ASSISTANT' as never,
        authorId: 'u1',
        content: 'A reply written for another participant alone.',
        metadata: {},
        placeholder: false,
        withheld: true,
        occurredAt: '2025-06-02T17:00:00.000Z',
        createdAt: '2025-06-02T17:00:00.000Z',
      },
      new Map([['u1', 'Ruth']]),
    );
    expect(html).toContain('turn note');
    expect(html).toContain('The agent, to Ruth');
  });

  it('makes file names safe for a ZIP and any disk', () => {
    expect(safeFileName('../../etc/passwd', 'x')).toBe('_.._etc_passwd');
    expect(safeFileName('a\u0000b:c?.pdf', 'x')).toBe('a_b_c_.pdf');
    expect(safeFileName('   ', 'fallback.md')).toBe('fallback.md');
  });
});
