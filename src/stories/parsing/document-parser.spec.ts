import {
  Document,
  HeadingLevel,
  Packer,
  Paragraph,
  Table,
  TableCell,
  TableRow,
  TextRun,
} from 'docx';
import { unzipSync, zipSync } from 'fflate';
import PDFDocument from 'pdfkit';
import { DocumentParseError, parseDocument, type ParseProblem } from './document-parser.js';

const limits = {
  maxBytes: 5 * 1024 * 1024,
  maxPages: 50,
  maxChars: 1_000_000,
  maxUnzippedBytes: 20 * 1024 * 1024,
  maxMemoryMb: 256,
  timeoutMs: 60_000,
  concurrency: 2,
};

type PdfOptions = PDFKit.PDFDocumentOptions;

/** A real PDF made by pdfkit; `draw` writes the pages (the first one exists already). */
function makePdf(draw: (doc: PDFKit.PDFDocument) => void, options: PdfOptions = {}) {
  return new Promise<Uint8Array>((resolve, reject) => {
    const doc = new PDFDocument({ compress: true, ...options });
    const parts: Buffer[] = [];
    doc.on('data', (part: Buffer) => parts.push(part));
    doc.on('end', () => resolve(new Uint8Array(Buffer.concat(parts))));
    doc.on('error', reject);
    draw(doc);
    doc.end();
  });
}

const sentence = (n: number) =>
  `On page ${n} grandma planted ${n * 3} rows of tomatoes in the spring of ${1950 + n}.`;

function tenPages(options: PdfOptions = {}) {
  return makePdf(
    (doc) => {
      for (let n = 1; n <= 10; n++) {
        if (n > 1) doc.addPage();
        doc.fontSize(12).text(sentence(n));
      }
    },
    { info: { Title: 'The Garden Diaries' }, ...options },
  );
}

async function problem(
  promise: Promise<unknown>,
): Promise<{ problem: ParseProblem; message: string }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof DocumentParseError) return { problem: err.problem, message: err.message };
    throw err;
  }
  throw new Error('parsed without a problem');
}

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('parseDocument: PDF', () => {
  it('leaves the process its own JSON (pdf.js would polyfill it with a slower one)', async () => {
    const { stringify, parse } = JSON;
    await parseDocument(await tenPages(), 'garden.pdf', null, limits);
    expect(JSON.stringify).toBe(stringify);
    expect(JSON.parse).toBe(parse);
  });

  let tenPagePdf: Uint8Array;
  beforeAll(async () => {
    tenPagePdf = await tenPages();
  });

  it('reads every page onto its own page number, with the title from the metadata', async () => {
    const doc = await parseDocument(tenPagePdf, 'diaries.pdf', 'application/pdf', limits);
    expect(doc.format).toBe('PDF');
    expect(doc.title).toBe('The Garden Diaries');
    expect(doc.pages.map((p) => p.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const page of doc.pages) {
      expect(page.text).toBe(sentence(page.number));
    }
  });

  it('is told by its content, whatever its name or type, and leaves the bytes intact', async () => {
    const copy = tenPagePdf.slice();
    const doc = await parseDocument(copy, 'notes.txt', 'text/plain', limits);
    expect(doc.format).toBe('PDF');
    // pdf.js takes over the buffer it is given: the caller's must not be the one.
    expect(copy.byteLength).toBe(tenPagePdf.byteLength);
    expect(Buffer.from(copy).equals(Buffer.from(tenPagePdf))).toBe(true);
    // Whatever type is claimed for it: the content says what it is.
    expect(
      (await parseDocument(tenPagePdf, 'diaries.pdf', 'application/x-odd', limits)).format,
    ).toBe('PDF');
    // Its name still has to be one Keepsake keeps.
    expect(
      (await problem(parseDocument(tenPagePdf, 'diaries.html', null, limits))).message,
    ).toMatch(/ends in \.html: a web page/);
  });

  it('breaks lines where the text does and leaves a blank line between blocks', async () => {
    const long =
      'Grandpa told the story of the flood every winter, and every winter the water rose a little higher, the boat got a little smaller and the cow he rescued a little heavier.';
    const bytes = await makePdf((doc) => {
      doc.fontSize(20).text('The Flood of 1952');
      doc.moveDown();
      doc.fontSize(12).text(long, { width: 300 });
      doc.moveDown(2);
      doc.text('Nobody ever found out what happened to the cow.');
    });
    const [page] = (await parseDocument(bytes, 'flood.pdf', null, limits)).pages;
    const blocks = page.text.split('\n\n');
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toBe('The Flood of 1952');
    // The long paragraph wraps over several lines, which stay one block.
    expect(blocks[1].split('\n').length).toBeGreaterThan(1);
    expect(blocks[1].replace(/\n/g, ' ')).toBe(long);
    expect(blocks[2]).toBe('Nobody ever found out what happened to the cow.');
  });

  it('refuses a password-protected PDF', async () => {
    const bytes = await tenPages({ userPassword: 'rosebud', ownerPassword: 'owner' });
    expect(await problem(parseDocument(bytes, 'locked.pdf', 'application/pdf', limits))).toEqual({
      problem: 'ENCRYPTED',
      message: 'The PDF is password-protected; upload an unprotected copy.',
    });
  });

  it('reads a PDF that is only restricted (an owner password, none to open it)', async () => {
    const bytes = await tenPages({
      ownerPassword: 'owner',
      permissions: { printing: 'lowResolution' },
    });
    const doc = await parseDocument(bytes, 'restricted.pdf', null, limits);
    expect(doc.pages[9].text).toBe(sentence(10));
  });

  it('refuses a PDF with more pages than allowed before reading any', async () => {
    const result = await problem(
      parseDocument(tenPagePdf, 'diaries.pdf', null, { ...limits, maxPages: 9 }),
    );
    expect(result.problem).toBe('TOO_MANY_PAGES');
    expect(result.message).toContain('10 pages');
    expect(result.message).toContain('at most 9');
  });

  it('refuses truncated or garbled PDF bytes as corrupt', async () => {
    const truncated = tenPagePdf.slice(0, 400);
    expect((await problem(parseDocument(truncated, 'cut.pdf', null, limits))).problem).toBe(
      'CORRUPT',
    );
    const garbled = new Uint8Array(4000);
    garbled.set(utf8('%PDF-1.7\n'));
    for (let i = 9; i < garbled.length; i++) garbled[i] = (i * 7919) % 251;
    const result = await problem(parseDocument(garbled, 'junk.pdf', null, limits));
    expect(result.problem).toBe('CORRUPT');
    expect(result.message).toMatch(/damaged/);
  });

  it('says that no text could be read from a PDF of pictures (a scan)', async () => {
    const bytes = await makePdf((doc) => {
      doc.rect(100, 100, 300, 400).fill('#777777');
      doc.addPage();
      doc.circle(200, 200, 50).fill('#333333');
    });
    const result = await problem(parseDocument(bytes, 'scan.pdf', null, limits));
    expect(result.problem).toBe('EMPTY');
    expect(result.message).toMatch(/No text could be read/);
    expect(result.message).toMatch(/[Ss]canned/);
  });

  it('refuses a PDF with more text than allowed', async () => {
    const result = await problem(
      parseDocument(tenPagePdf, 'diaries.pdf', null, { ...limits, maxChars: 300 }),
    );
    expect(result).toEqual({
      problem: 'TOO_LONG',
      message: 'The document has more than 300 characters of text; split it into smaller files.',
    });
  });

  it('gives up on a PDF that takes longer to read than allowed', async () => {
    const result = await problem(
      parseDocument(tenPagePdf, 'diaries.pdf', null, { ...limits, timeoutMs: 1 }),
    );
    expect(result.problem).toBe('TOO_COMPLEX');
    expect(result.message).toMatch(/took longer than .* seconds to read/);
  });

  it('refuses a PDF whose reading needs more memory than its thread is given', async () => {
    const result = await problem(
      parseDocument(tenPagePdf, 'diaries.pdf', null, { ...limits, maxMemoryMb: 2 }),
    );
    expect(result.problem).toBe('TOO_COMPLEX');
    expect(result.message).toMatch(/more than 2 MB of memory/);
  });

  it('reads several PDFs at once, a few at a time, each whole', async () => {
    const docs = await Promise.all(
      [1, 2, 3, 4, 5].map(() =>
        parseDocument(tenPagePdf, 'diaries.pdf', null, { ...limits, concurrency: 2 }),
      ),
    );
    for (const doc of docs) expect(doc.pages[6].text).toBe(sentence(7));
  });

  it('keeps empty pages in place so page numbers stay right', async () => {
    const bytes = await makePdf((doc) => {
      doc.text('Front page.');
      doc.addPage();
      doc.addPage();
      doc.text('Third page.');
    });
    const doc = await parseDocument(bytes, 'gap.pdf', null, limits);
    expect(doc.pages).toEqual([
      { number: 1, text: 'Front page.' },
      { number: 2, text: '' },
      { number: 3, text: 'Third page.' },
    ]);
    expect(doc.title).toBeNull();
  });
});

describe('parseDocument: DOCX', () => {
  async function makeDocx(children: (Paragraph | Table)[]): Promise<Uint8Array> {
    const doc = new Document({ sections: [{ children }] });
    return new Uint8Array(await Packer.toBuffer(doc));
  }

  it('keeps headings as Markdown headings and paragraphs apart', async () => {
    const bytes = await makeDocx([
      new Paragraph({ text: 'Remembering Rose', heading: HeadingLevel.TITLE }),
      new Paragraph({ text: 'Early years', heading: HeadingLevel.HEADING_1 }),
      new Paragraph({
        children: [
          new TextRun('Rose was born in '),
          new TextRun({ text: 'Cork', bold: true }),
          new TextRun(' in 1931 & never <once> missed a "Sunday" roast.'),
        ],
      }),
      new Paragraph('She moved to Boston at nineteen.'),
      new Paragraph({ text: 'Her apple pie', heading: HeadingLevel.HEADING_2 }),
      new Paragraph({ text: 'Six apples', bullet: { level: 0 } }),
      new Paragraph({ text: 'A pinch of cinnamon', bullet: { level: 0 } }),
      new Table({
        rows: [
          new TableRow({
            children: [
              new TableCell({ children: [new Paragraph('Flour')] }),
              new TableCell({ children: [new Paragraph('2 cups')] }),
            ],
          }),
          new TableRow({
            children: [
              new TableCell({ children: [new Paragraph('Butter')] }),
              new TableCell({ children: [new Paragraph('1 cup')] }),
            ],
          }),
        ],
      }),
      new Paragraph(''),
      new Paragraph('Bake for an hour.'),
    ]);
    const doc = await parseDocument(bytes, 'rose.docx', null, limits);
    expect(doc.format).toBe('DOCX');
    expect(doc.title).toBe('Remembering Rose');
    expect(doc.pages).toEqual([
      {
        number: 1,
        text: [
          '# Remembering Rose',
          '# Early years',
          'Rose was born in Cork in 1931 & never <once> missed a "Sunday" roast.',
          'She moved to Boston at nineteen.',
          '## Her apple pie',
          '- Six apples\n- A pinch of cinnamon',
          'Flour | 2 cups\nButter | 1 cup',
          'Bake for an hour.',
        ].join('\n\n'),
      },
    ]);
  });

  it('refuses a damaged DOCX as corrupt', async () => {
    const bytes = await makeDocx([new Paragraph('A letter from the war.')]);
    const truncated = bytes.slice(0, Math.floor(bytes.length / 2));
    const result = await problem(parseDocument(truncated, 'letter.docx', null, limits));
    expect(result.problem).toBe('CORRUPT');
    expect(result.message).toMatch(/Word document/);
  });

  it('refuses a DOCX that would unpack to more than allowed, before opening it', async () => {
    const bytes = await makeDocx([new Paragraph('A letter with a very large picture.')]);
    // A part of 30 MB of zeros: a few KB packed, what a zip bomb looks like.
    const parts = unzipSync(bytes);
    parts['word/media/image1.bin'] = new Uint8Array(30 * 1024 * 1024);
    const bomb = zipSync(parts, { level: 9 });
    expect(bomb.byteLength).toBeLessThan(200_000);
    expect(await problem(parseDocument(bomb, 'bomb.docx', null, limits))).toEqual({
      problem: 'TOO_COMPLEX',
      message:
        'The Word document would unpack to 30 MB; at most 20 MB can be read. Save it again without embedded media, or split it.',
    });
  });

  it('refuses a DOCX with more text than allowed', async () => {
    const bytes = await makeDocx([new Paragraph('word '.repeat(200))]);
    const result = await problem(
      parseDocument(bytes, 'long.docx', null, { ...limits, maxChars: 500 }),
    );
    expect(result.problem).toBe('TOO_LONG');
  });

  it('refuses a DOCX without text as empty', async () => {
    const bytes = await makeDocx([new Paragraph('')]);
    expect((await problem(parseDocument(bytes, 'blank.docx', null, limits))).problem).toBe('EMPTY');
  });
});

describe('parseDocument: text and Markdown', () => {
  it('reads Markdown by extension, with its first "# " heading as the title', async () => {
    const text = '## Preface\r\n\r\n# Grandpa Joe\r\nHe fixed radios.\r\rAnd clocks.\r\n';
    const doc = await parseDocument(utf8(text), 'joe.md', null, limits);
    expect(doc).toEqual({
      format: 'MARKDOWN',
      title: 'Grandpa Joe',
      pages: [
        { number: 1, text: '## Preface\n\n# Grandpa Joe\nHe fixed radios.\n\nAnd clocks.\n' },
      ],
    });
  });

  it('reads Markdown by type, and ignores a "#" line in a code block for the title', async () => {
    const text = '```sh\n# not a title\n```\n\n# Recipes\n';
    const doc = await parseDocument(utf8(text), 'upload', 'text/markdown; charset=utf-8', limits);
    expect(doc.format).toBe('MARKDOWN');
    expect(doc.title).toBe('Recipes');
  });

  it('reads plain UTF-8 text, dropping a byte-order mark', async () => {
    const bytes = utf8('\uFEFFDear Maria,\nthe cherries are ripe. — Zoë 🍒');
    const doc = await parseDocument(bytes, 'letter.txt', 'text/plain', limits);
    expect(doc).toEqual({
      format: 'TEXT',
      title: null,
      pages: [{ number: 1, text: 'Dear Maria,\nthe cherries are ripe. — Zoë 🍒' }],
    });
  });

  it('takes clean UTF-8 text without a known name as text', async () => {
    const doc = await parseDocument(utf8('Just some words.'), 'story', null, limits);
    expect(doc.format).toBe('TEXT');
  });

  it('refuses a file that is not UTF-8', async () => {
    const latin1 = Uint8Array.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x64, 0x75, 0x20, 0x6d]);
    const result = await problem(parseDocument(latin1, 'cafe.txt', 'text/plain', limits));
    expect(result.problem).toBe('UNSUPPORTED');
    expect(result.message).toMatch(/not UTF-8 text/);
    const utf16 = Uint8Array.from([0xff, 0xfe, 0x48, 0x00, 0x69, 0x00]);
    expect((await problem(parseDocument(utf16, 'hi.txt', null, limits))).message).toMatch(/UTF-16/);
  });

  it('refuses binary junk that happens to be valid UTF-8', async () => {
    const junk = Uint8Array.from({ length: 64 }, (_, i) => i % 32);
    const result = await problem(parseDocument(junk, 'data.txt', null, limits));
    expect(result.problem).toBe('UNSUPPORTED');
    expect(result.message).toMatch(/binary/);
  });

  it('refuses an empty or blank file', async () => {
    expect((await problem(parseDocument(utf8(''), 'a.txt', null, limits))).problem).toBe('EMPTY');
    expect((await problem(parseDocument(utf8(' \n\t\n'), 'a.md', null, limits))).problem).toBe(
      'EMPTY',
    );
  });

  it('refuses a web page', async () => {
    const html = utf8('<html><body>Hello</body></html>');
    const result = await problem(parseDocument(html, 'page.html', 'text/html', limits));
    expect(result.problem).toBe('UNSUPPORTED');
    expect(result.message).toMatch(/web page/);
  });

  it('refuses a text file with more characters than allowed', async () => {
    const result = await problem(
      parseDocument(utf8('a'.repeat(1001)), 'a.txt', null, { ...limits, maxChars: 1000 }),
    );
    expect(result.problem).toBe('TOO_LONG');
    expect(result.message).toContain('1,000 characters');
  });
});

describe('parseDocument: other files', () => {
  it('refuses an image and says what it looks like', async () => {
    const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    expect(await problem(parseDocument(png, 'photo.txt', 'text/plain', limits))).toEqual({
      problem: 'UNSUPPORTED',
      message:
        'Only plain text, Markdown, PDF and DOCX files can be uploaded; this looks like a PNG image.',
    });
    const jpeg = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46]);
    expect((await problem(parseDocument(jpeg, 'a.jpg', 'image/jpeg', limits))).message).toMatch(
      /JPEG image/,
    );
  });

  it('refuses an old Word file and other ZIP files', async () => {
    const doc = Uint8Array.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]);
    const old = await problem(parseDocument(doc, 'will.doc', 'application/msword', limits));
    expect(old.problem).toBe('UNSUPPORTED');
    expect(old.message).toMatch(/\.doc/);
    const xlsx = utf8('PK\u0003\u0004\u0014\u0000\u0000\u0000xl/workbook.xml');
    expect((await problem(parseDocument(xlsx, 'budget.xlsx', null, limits))).message).toMatch(
      /Excel spreadsheet/,
    );
    const zip = utf8('PK\u0003\u0004\u0014\u0000\u0000\u0000photos/1.jpg');
    expect((await problem(parseDocument(zip, 'photos.zip', null, limits))).message).toMatch(
      /ZIP archive/,
    );
  });

  it('refuses a file over the size limit before looking at it', async () => {
    const big = new Uint8Array(2048).fill(0x61);
    const result = await problem(
      parseDocument(big, 'long.txt', null, { ...limits, maxBytes: 1024 }),
    );
    expect(result).toEqual({
      problem: 'TOO_LARGE',
      message: 'The file is 2 KB; files of up to 1 KB can be uploaded.',
    });
  });
});
