/**
 * What a file is, from its first bytes (and, for ZIP containers, the names of the parts they
 * hold): the formats we read, and a plain name for the common ones we do not, so the message to
 * the user can say what the file looks like.
 */
export type FileKind =
  { kind: 'PDF' } | { kind: 'DOCX' } | { kind: 'OTHER'; description: string } | { kind: 'UNKNOWN' };

interface Signature {
  offset: number;
  bytes: number[] | string;
  description: string;
}

const SIGNATURES: Signature[] = [
  {
    offset: 0,
    bytes: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    description: 'a PNG image',
  },
  { offset: 0, bytes: [0xff, 0xd8, 0xff], description: 'a JPEG image' },
  { offset: 0, bytes: 'GIF8', description: 'a GIF image' },
  { offset: 0, bytes: 'II*\0', description: 'a TIFF image' },
  { offset: 0, bytes: 'MM\0*', description: 'a TIFF image' },
  { offset: 8, bytes: 'WEBP', description: 'a WebP image' },
  { offset: 4, bytes: 'ftypheic', description: 'a HEIC photo' },
  { offset: 4, bytes: 'ftypheix', description: 'a HEIC photo' },
  { offset: 4, bytes: 'ftypmif1', description: 'a HEIC photo' },
  { offset: 4, bytes: 'ftyp', description: 'a video or audio file' },
  { offset: 8, bytes: 'WAVE', description: 'a WAV audio file' },
  { offset: 8, bytes: 'AVI ', description: 'a video file' },
  { offset: 0, bytes: 'ID3', description: 'an MP3 audio file' },
  { offset: 0, bytes: 'OggS', description: 'an Ogg audio file' },
  { offset: 0, bytes: 'fLaC', description: 'a FLAC audio file' },
  { offset: 0, bytes: [0x1a, 0x45, 0xdf, 0xa3], description: 'a video file' },
  {
    offset: 0,
    bytes: [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1],
    description: 'an old-style Word (.doc) or Office file; save it as DOCX or PDF and upload that',
  },
  {
    offset: 0,
    bytes: '{\\rtf',
    description: 'an RTF document; save it as DOCX or PDF and upload that',
  },
  { offset: 0, bytes: [0x1f, 0x8b], description: 'a compressed (gzip) archive' },
  { offset: 0, bytes: "7z\xbc\xaf'\x1c", description: 'a 7-Zip archive' },
  { offset: 0, bytes: 'Rar!', description: 'a RAR archive' },
  { offset: 0, bytes: [0x7f, 0x45, 0x4c, 0x46], description: 'a program file' },
];

const ZIP = [0x50, 0x4b, 0x03, 0x04];

/** ZIP containers, by a part name (stored uncompressed in each entry's header) or mimetype. */
const ZIP_PARTS: { marker: string; description: string | null }[] = [
  { marker: 'word/document.xml', description: null },
  { marker: 'xl/workbook.xml', description: 'an Excel spreadsheet' },
  { marker: 'ppt/presentation.xml', description: 'a PowerPoint presentation' },
  {
    marker: 'application/vnd.oasis.opendocument.text',
    description: 'an OpenDocument text file; save it as DOCX or PDF and upload that',
  },
  { marker: 'application/vnd.oasis.opendocument', description: 'an OpenDocument file' },
  { marker: 'application/epub+zip', description: 'an e-book (EPUB)' },
];

function startsWith(bytes: Uint8Array, offset: number, expected: number[] | string): boolean {
  const want =
    typeof expected === 'string' ? Array.from(expected, (c) => c.charCodeAt(0)) : expected;
  if (bytes.length < offset + want.length) return false;
  return want.every((b, i) => bytes[offset + i] === b);
}

export function sniffFile(bytes: Uint8Array): FileKind {
  // PDF readers accept the header anywhere in the first KiB, after a stray BOM or binary junk
  // (not after words: a text that mentions "%PDF-" is still a text).
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024));
  const pdf = head.indexOf('%PDF-');
  if (pdf !== -1 && !/[A-Za-z0-9]/.test(head.subarray(0, pdf).toString('latin1')))
    return { kind: 'PDF' };
  if (startsWith(bytes, 0, ZIP)) {
    const all = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    for (const part of ZIP_PARTS) {
      if (all.indexOf(part.marker) === -1) continue;
      return part.description === null
        ? { kind: 'DOCX' }
        : { kind: 'OTHER', description: part.description };
    }
    return { kind: 'OTHER', description: 'a ZIP archive' };
  }
  for (const signature of SIGNATURES) {
    if (startsWith(bytes, signature.offset, signature.bytes))
      return { kind: 'OTHER', description: signature.description };
  }
  return { kind: 'UNKNOWN' };
}
