import PDFDocument from 'pdfkit';
import { checkKeptFile, DocumentParseError, parseDocument } from './document-parser.js';

/**
 * What Keepsake keeps, by name and claimed type (an allow list: file-types.ts), for an upload
 * and for an original that comes with its text, a legacy archive's.
 */
const limits = {
  maxBytes: 5 * 1024 * 1024,
  maxPages: 50,
  maxChars: 1_000_000,
  maxUnzippedBytes: 20 * 1024 * 1024,
  maxMemoryMb: 256,
  timeoutMs: 60_000,
  concurrency: 2,
};

const utf8 = (text: string) => new TextEncoder().encode(text);

async function problem(promise: Promise<unknown>): Promise<{ problem: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DocumentParseError) return { problem: err.problem, message: err.message };
    throw err;
  }
  throw new Error('parsed without a problem');
}

function minimalPdf(): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument();
    const parts: Buffer[] = [];
    doc.on('data', (part: Buffer) => parts.push(part));
    doc.on('end', () => resolve(new Uint8Array(Buffer.concat(parts))));
    doc.on('error', reject);
    doc.text('Dear Maria, the cherries are ripe.');
    doc.end();
  });
}

describe('parseDocument: the allow list', () => {
  it('takes only names and types on its allow list, whatever the text inside', async () => {
    const svg = utf8('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    for (const [name, type, says] of [
      ['drawing.svg', 'image/svg+xml', /ends in \.svg: an SVG image/],
      ['drawing.svg', null, /ends in \.svg/],
      ['drawing.svg', 'text/plain', /ends in \.svg/],
      ['feed.xml', 'text/xml', /ends in \.xml: an XML file/],
      ['page.xhtml', null, /web page/],
      ['notes.csv', 'text/csv', /ends in \.csv\./],
      ['notes.txt', 'image/svg+xml', /sent as image\/svg\+xml/],
      ['notes.txt', 'application/xhtml+xml', /web page/],
    ] as const) {
      const result = await problem(parseDocument(svg, name, type, limits));
      expect({ name, type, ...result }).toMatchObject({ name, type, problem: 'UNSUPPORTED' });
      expect(result.message).toMatch(says);
    }
    // The same text under a name and type on the list is text, kept as text.
    for (const [name, type] of [
      ['drawing.txt', 'text/plain'],
      ['drawing', 'application/octet-stream'],
      ['drawing.md', 'text/markdown; charset=utf-8'],
    ]) {
      expect((await parseDocument(svg, name, type, limits)).pages[0].text).toContain('<svg');
    }
  });
});

describe('checkKeptFile: an original that comes with its text (a legacy archive)', () => {
  it('passes a file that is what its format says, under a name and type on the list', async () => {
    expect(() => checkKeptFile(utf8('Plum cake.'), null, null, 'MARKDOWN')).not.toThrow();
    expect(() =>
      checkKeptFile(utf8('Plum cake.'), 'cake.txt', 'text/plain; charset=utf-8', 'TEXT'),
    ).not.toThrow();
    const pdf = await minimalPdf();
    expect(() => checkKeptFile(pdf, 'diaries.pdf', 'application/pdf', 'PDF')).not.toThrow();
  });

  it('refuses what an upload would refuse, and a file that is not its format', async () => {
    const refused = (
      bytes: Uint8Array,
      name: string | null,
      type: string | null,
      format: 'TEXT' | 'PDF',
    ) => {
      try {
        checkKeptFile(bytes, name, type, format);
      } catch (err) {
        expect(err).toBeInstanceOf(DocumentParseError);
        return (err as Error).message;
      }
      throw new Error('not refused');
    };
    const page = utf8('<html><script>alert(1)</script></html>');
    expect(refused(page, 'page.html', 'text/html', 'TEXT')).toMatch(/web page/);
    expect(refused(page, 'page.txt', 'text/html', 'TEXT')).toMatch(/web page/);
    expect(refused(utf8('a\u0000b'), 'a.txt', null, 'TEXT')).toMatch(/not text/);
    expect(refused(utf8('just words'), 'a.pdf', null, 'PDF')).toMatch(
      /The file is text, not the PDF/,
    );
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    expect(refused(png, 'photo.txt', null, 'TEXT')).toMatch(/PNG image/);
  });
});
