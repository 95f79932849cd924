import type { FactCategory } from '../gql/graphql';

export const CATEGORIES: FactCategory[] = [
  'HABIT',
  'HOBBY',
  'MILESTONE',
  'OCCUPATION',
  'OTHER',
  'PERSONALITY',
  'PREFERENCE',
  'RELATIONSHIP',
];
