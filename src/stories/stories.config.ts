import { defineVariables, integer } from '../config/config-spec.js';

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
