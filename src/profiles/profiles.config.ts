import { decimal, defineVariables, integer } from '../config/config-spec.js';

export const profilesVariables = defineVariables({
  PROFILE_CONTEXT_TOKENS: {
    description:
      "Tokens the member's profile may take in the agent's context (the profile section, within CONTEXT_TOKEN_BUDGET); an entry that does not fit is left out whole; 0 leaves the profile out.",
    default: '150',
    parse: integer(0, 4000),
  },
  PROFILE_RECALL_MIN_SCORE: {
    description:
      "How closely a recall question must match a profile entry (cosine similarity, or 1 when it names the field about the speaker, 0.8 when it names a word of the entry's value) for recall to return it.",
    default: '0.45',
    parse: decimal(0, 1),
  },
});
