/** Sentences, a paraphrase of each, and an unrelated one: what any sentence encoder must tell apart. */
export const PARAPHRASES: [sentence: string, paraphrase: string, unrelated: string][] = [
  [
    'My dad loved to go fishing.',
    'Fishing was my father’s favourite hobby.',
    'The invoice is due on Friday.',
  ],
  [
    'She was born in Lisbon in 1950.',
    'Her birthplace was Lisbon, in 1950.',
    'I need to charge my phone.',
  ],
  [
    'He worked as a carpenter for thirty years.',
    'For three decades he was a woodworker.',
    'The weather is cold today.',
  ],
];
