import { ConfigOf, defineVariables, duration, integer } from '../config/config-spec.js';

export const legaciesVariables = defineVariables({
  INVITATION_TTL: {
    description:
      'How long an invitation to a legacy can be accepted, as a duration (90s, 15m, 24h, 14d).',
    default: '14d',
    parse: duration('1m', '365d'),
  },
  INVITATIONS_PER_LEGACY_PER_DAY: {
    description:
      'Invitations a legacy may send in any 24 hours (renewed, cancelled and declined ones count).',
    default: '50',
    parse: integer(1, 100_000),
  },
  MAX_LEGACIES_PER_USER: {
    description: 'Legacies one user may own (create, or become owner of by accepting).',
    default: '25',
    parse: integer(1, 100_000),
  },
  MAX_MEMBERS_PER_LEGACY: {
    description: "Members of one legacy, counting its invitations that haven't expired.",
    default: '100',
    parse: integer(2, 100_000),
  },
});

declare module '../config/app-config.js' {
  interface Env extends ConfigOf<typeof legaciesVariables> {}
}
