import { ConfigOf, ConfigParseError, defineVariables, integer } from '../config/config-spec.js';

const budget = (raw: string): number => {
  const n = integer(1, 1_000_000)(raw);
  if (n > 2000) throw new ConfigParseError('must be at most 2000 (the hard maximum)');
  return n;
};

export const contextVariables = defineVariables({
  CONTEXT_TOKEN_BUDGET: {
    description:
      'Tokens for the retrieved sections of the context (facts, memories, summaries, past turns); hard maximum 2000.',
    default: '1000',
    parse: budget,
  },
  CONTEXT_RECENT_TURNS: {
    description: 'Turns of the recent window given verbatim to the model with each reply.',
    default: '20',
    parse: integer(0, 200),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof contextVariables> {}
}

export const MAX_CONTEXT_BUDGET = 2000;
