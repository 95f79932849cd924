import { ConfigOf, decimal, defineVariables, integer } from '../config/config-spec.js';

export const profilesVariables = defineVariables({
  PROFILE_CONTEXT_TOKENS: {
    description:
      "Tokens the member's profile may take in the agent's context (the profile section, within CONTEXT_TOKEN_BUDGET); an entry that does not fit is left out whole; 0 leaves the profile out.",
    default: '150',
    parse: integer(0, 4000),
  },
  PROFILE_RECALL_MIN_SCORE: {
    description:
      'Cosine similarity a recall question must reach with a profile entry, leading every other entry of the profile by 0.1, for recall to return it by meaning alone; a question that names the field about the speaker ("my hobbies") or a word of the entry returns it anyway.',
    default: '0.35',
    parse: decimal(0, 1),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof profilesVariables> {}
}
