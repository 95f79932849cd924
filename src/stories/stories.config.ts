import { ConfigOf, defineVariables, integer } from '../config/config-spec.js';

export const storiesVariables = defineVariables({
  DOCUMENT_MAX_BYTES: {
    description: 'Largest document that can be uploaded, in bytes (20 MB by default).',
    default: '20971520',
    parse: integer(1024, 200 * 1024 * 1024),
  },
  DOCUMENT_MAX_PAGES: {
    description: 'Most pages an uploaded PDF may have.',
    default: '2000',
    parse: integer(1, 100_000),
  },
  DOCUMENT_MAX_CHARS: {
    description:
      'Most characters of text an uploaded document may hold (about 2,000 dense pages by default).',
    default: '8000000',
    parse: integer(1000, 100_000_000),
  },
  DOCUMENT_MAX_UNZIPPED_BYTES: {
    description:
      'Most bytes a DOCX may unpack to (its parts together); a larger one is refused unopened.',
    default: '209715200',
    parse: integer(1024 * 1024, 4 * 1024 * 1024 * 1024),
  },
  DOCUMENT_PARSE_MEMORY_MB: {
    description: 'Heap, in MB, of the worker thread a PDF or DOCX is read in.',
    default: '512',
    parse: integer(64, 16_384),
  },
  DOCUMENT_PARSE_TIMEOUT_MS: {
    description: 'How long reading one PDF or DOCX may take before it is refused, in ms.',
    default: '120000',
    parse: integer(1000, 3_600_000),
  },
  DOCUMENT_PARSE_CONCURRENCY: {
    description: 'PDF and DOCX files read at the same time per instance; others wait their turn.',
    default: '2',
    parse: integer(1, 64),
  },
  STORIES_PER_DAY: {
    description: 'Stories and documents one member may add per rolling 24 hours.',
    default: '200',
    parse: integer(1, 100_000),
  },
  MEMBER_STORAGE_MAX_BYTES: {
    description:
      "Bytes of stories and documents (their original files) one member may keep in one legacy, private and shared: 1 GB by default. Only their own count, so what they are told never depends on another member's private files.",
    default: '1073741824',
    parse: integer(1024 * 1024, 1024 * 1024 * 1024 * 1024),
  },
  STORY_MAX_CHARS: {
    description: 'Longest story written in the app (addStory, updateStory), in characters.',
    default: '500000',
    parse: integer(100, 10_000_000),
  },
  STORY_CHUNK_TOKENS: {
    description:
      'Tokens a story chunk holds at most; chunks follow headings, paragraphs and pages.',
    default: '500',
    parse: integer(50, 2000),
  },
  SEARCH_CONTEXT_STORIES: {
    description:
      "Story passages offered to the agent's context per reply (the stories section, within the token budget); 0 turns it off.",
    default: '4',
    parse: integer(0, 50),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof storiesVariables> {}
}
