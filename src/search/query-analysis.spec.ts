import {
  asksSummary,
  extractIdentifiers,
  identifierMatch,
  isCodeQuery,
  queryWords,
  refersBack,
  trigramProbes,
  lexemeQuery,
  selectingLexemes,
  websearchOr,
} from './query-analysis.js';

describe('extractIdentifiers', () => {
  it('finds camelCase, PascalCase, snake_case, file names, dotted names and backticks', () => {
    const ids = extractIdentifiers(
      'Why does parseDate fail in src/utils/date-helpers.ts when HttpClient sends max_retries to `retry policy`? console.log shows CONTEXT_TOKEN_BUDGET',
    );
    expect(ids).toEqual(
      expect.arrayContaining([
        'parseDate',
        'src/utils/date-helpers.ts',
        'HttpClient',
        'max_retries',
        'retry policy',
        'console.log',
        'CONTEXT_TOKEN_BUDGET',
      ]),
    );
  });

  it('ignores plain prose, abbreviations and short words', () => {
    expect(extractIdentifiers('What did Grandma say about the garden, e.g. the roses?')).toEqual(
      [],
    );
    expect(extractIdentifiers('I.e. nothing here, OK?')).toEqual([]);
  });

  it('keeps the longest form of overlapping identifiers', () => {
    expect(extractIdentifiers('open package.json please')).toEqual(['package.json']);
  });
});

describe('identifierMatch', () => {
  it('is the share of identifiers found verbatim (file names ignoring case)', () => {
    const ids = ['parseDate', 'README.md'];
    expect(identifierMatch(ids, 'we fixed parseDate and the readme.md')).toBe(1);
    expect(identifierMatch(ids, 'we fixed parsedate')).toBe(0);
    expect(identifierMatch(ids, 'parseDate only')).toBe(0.5);
    expect(identifierMatch([], 'anything')).toBe(0);
  });
});

describe('isCodeQuery', () => {
  it('recognizes code questions in several languages', () => {
    expect(isCodeQuery('How did we fix parseDate?')).toBe(true);
    expect(isCodeQuery('what was the stack trace of that bug')).toBe(true);
    expect(isCodeQuery('```\nfoo()\n```')).toBe(true);
    expect(isCodeQuery('那段代码是怎么写的')).toBe(true);
    expect(isCodeQuery('Tell me about her garden')).toBe(false);
  });
});

describe('refersBack', () => {
  it.each([
    'What did we talk about last time?',
    'Like I said before, he loved boats',
    'Do you remember when we went fishing?',
    'We talked about his army years',
    'you told me about the farm',
    '我们之前聊过奶奶的花园',
    '以前说的那件事',
    '上次你提到的',
  ])('"%s" refers back', (text) => expect(refersBack(text)).toBe(true));

  it.each(['Tell me about grandpa', 'He loved boats', '奶奶的花园很美'])('"%s" does not', (text) =>
    expect(refersBack(text)).toBe(false),
  );
});

describe('asksSummary', () => {
  it.each([
    'Can you summarize how we approached the move?',
    'Give me a comprehensive summary of the plan',
    'Could you summarise our talks about the garden?',
    'A quick recap of what we decided, please',
    'Can you sum up what we planned for the trip?',
    'Sum it up for me',
  ])('"%s" asks for a summary', (text) => expect(asksSummary(text)).toBe(true));

  it.each([
    'What did we do last summer?',
    'Summarizer settings',
    'Tell me about grandpa',
    'What was the sum he paid up front?',
  ])('"%s" does not', (text) => expect(asksSummary(text)).toBe(false));
});

describe('queryWords and websearchOr', () => {
  it('splits on anything but letters and digits, keeps first occurrences', () => {
    expect(queryWords("What's Nana's recipe? Nana's pie, 1962!")).toEqual([
      "What's",
      "Nana's",
      'recipe',
      'pie',
      '1962',
    ]);
  });

  it('ORs the words and cannot inject websearch operators', () => {
    expect(websearchOr(['grandpa', 'or', 'boat', 'well-known', "Nana's"])).toBe(
      'grandpa or boat or well known or Nanas',
    );
    expect(websearchOr(queryWords('"exact phrase" -excluded OR x'))).toBe(
      'exact or phrase or excluded or x',
    );
  });
});

describe('trigramProbes', () => {
  it('uses words of 3+ characters and windows of CJK text', () => {
    expect(trigramProbes('Grandpa Jo fishng trip')).toEqual(['Grandpa', 'fishng', 'trip']);
    expect(trigramProbes('奶奶的花园')).toEqual(['奶奶的', '的花园']);
  });

  it('keeps the longest probes when there are too many', () => {
    const probes = trigramProbes('alpha beta gamma delta epsilon zeta', 3);
    expect(probes).toEqual(['alpha', 'gamma', 'epsilon']);
  });
});

describe('lexemeQuery', () => {
  it('ORs lexemes as tsquery literals, escaping quotes and backslashes', () => {
    expect(lexemeQuery(['farm', "o'neil", 'a\\b'])).toBe("'farm' | 'o''neil' | 'a\\\\b'");
    expect(lexemeQuery([])).toBe('');
  });
});

describe('selectingLexemes', () => {
  const known = [
    { lexeme: 'farm', df: 40 },
    { lexeme: 'said', df: 9000 },
    { lexeme: 'joe', df: 2500 },
  ];

  it('lets every word select turns in a small scope, however common', () => {
    const small = [
      { lexeme: 'farm', df: 4 },
      { lexeme: 'said', df: 1400 },
    ];
    expect(selectingLexemes(small, 1500)).toEqual(['farm', 'said']);
  });

  it('leaves words held by more than the share of a large scope out of the selection', () => {
    expect(selectingLexemes(known, 100_000)).toEqual(['farm']);
    // Only common words: they select rather than nothing, within the budget, rarest first.
    expect(selectingLexemes(known.slice(1), 100_000)).toEqual(['joe']);
    const mid = [
      { lexeme: 'said', df: 1900 },
      { lexeme: 'went', df: 1800 },
      { lexeme: 'fish', df: 1500 },
    ];
    expect(selectingLexemes(mid, 50_000)).toEqual(['went', 'fish']);
  });

  it('keeps the rarest word even when it alone holds more turns than the budget', () => {
    const common = [
      { lexeme: 'grandpa', df: 7700 },
      { lexeme: 'fish', df: 18_000 },
    ];
    expect(selectingLexemes(common, 100_000)).toEqual(['grandpa']);
  });
});
