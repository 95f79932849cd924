import { parseTimeExpression, timeMatch } from './time-expressions.js';

// Wednesday 15 May 2024, mid-morning UTC.
const CLOCK = new Date('2024-05-15T10:00:00Z');

function range(text: string, clock = CLOCK, zone = 'UTC') {
  const r = parseTimeExpression(text, clock, zone);
  return r && [r.from.toISOString().slice(0, 10), r.to.toISOString().slice(0, 10), r.expression];
}

describe('parseTimeExpression', () => {
  it.each([
    ['What did we talk about yesterday?', '2024-05-14', '2024-05-15', 'yesterday'],
    ['the day before yesterday', '2024-05-13', '2024-05-14', 'the day before yesterday'],
    ['anything new today?', '2024-05-15', '2024-05-16', 'today'],
    ['what did I say last week', '2024-05-06', '2024-05-13', 'last week'],
    ['this week so far', '2024-05-13', '2024-05-16', 'this week'],
    ['last weekend we went out', '2024-05-11', '2024-05-13', 'last weekend'],
    ['last month', '2024-04-01', '2024-05-01', 'last month'],
    ['last year', '2023-01-01', '2024-01-01', 'last year'],
    ['3 days ago', '2024-05-12', '2024-05-13', '3 days ago'],
    ['two weeks ago', '2024-05-01', '2024-05-08', 'two weeks ago'],
    ['a month ago', '2024-04-15', '2024-05-15', 'a month ago'],
    ['last Monday', '2024-05-13', '2024-05-14', 'last Monday'],
    ['on Friday', '2024-05-10', '2024-05-11', 'on Friday'],
    ['in March', '2024-03-01', '2024-04-01', 'in March'],
    ['in June', '2023-06-01', '2023-07-01', 'in June'],
    ['last May', '2023-05-01', '2023-06-01', 'last May'],
    ['what did we say in may?', '2024-05-01', '2024-06-01', 'in may'],
    ['since mar', '2024-03-01', '2024-04-01', 'since mar'],
    ['What did Maria donate in December 2023?', '2023-12-01', '2024-01-01', 'December 2023'],
    ['before April 10, 2023', '2023-04-10', '2023-04-11', 'April 10, 2023'],
    ['on 8 May 2023', '2023-05-08', '2023-05-09', '8 May 2023'],
    ['on 2022-11-30', '2022-11-30', '2022-12-01', '2022-11-30'],
    ['back in 2019', '2019-01-01', '2020-01-01', 'back in 2019'],
    ['recently', '2024-04-15', '2024-05-16', 'recently'],
    [
      'Where was John between August 11 and August 15 2023?',
      '2023-08-11',
      '2023-08-16',
      'between August 11 and August 15 2023',
    ],
    ['between August 11 and 15', '2023-08-11', '2023-08-16', 'between August 11 and 15'],
    [
      'Where was Tim in the week before 16 November 2023?',
      '2023-11-09',
      '2023-11-16',
      'the week before 16 November 2023',
    ],
    [
      'the weekend before May 13, 2024',
      '2024-05-11',
      '2024-05-13',
      'the weekend before May 13, 2024',
    ],
    ['the day after 8 May 2023', '2023-05-09', '2023-05-10', 'the day after 8 May 2023'],
    ['in the second week of November', '2023-11-08', '2023-11-15', 'second week of November'],
    ['the last week of April 2024', '2024-04-24', '2024-05-01', 'last week of April 2024'],
    ['in the beginning of November 2022', '2022-11-01', '2022-11-11', 'beginning of November 2022'],
    ['in early June 2022', '2022-06-01', '2022-06-11', 'early June 2022'],
    ['mid-May', '2024-05-11', '2024-05-21', 'mid-May'],
    ["I'll come over tomorrow", '2024-05-16', '2024-05-17', 'tomorrow'],
    ['see you next week', '2024-05-20', '2024-05-27', 'next week'],
    ['next Friday', '2024-05-17', '2024-05-18', 'next Friday'],
    ['我们昨天聊了什么', '2024-05-14', '2024-05-15', '昨天'],
    ['上周说的事', '2024-05-06', '2024-05-13', '上周'],
    ['上个月', '2024-04-01', '2024-05-01', '上个月'],
    ['去年夏天', '2023-01-01', '2024-01-01', '去年'],
    ['三天前', '2024-05-12', '2024-05-13', '三天前'],
    ['五月的时候', '2024-05-01', '2024-06-01', '五月'],
    ['2023年12月', '2023-12-01', '2024-01-01', '2023年12月'],
    ['十二月', '2023-12-01', '2024-01-01', '十二月'],
    ['5月8日', '2024-05-08', '2024-05-09', '5月8日'],
  ])('%s', (text, from, to, expression) => {
    expect(range(text)).toEqual([from, to, expression]);
  });

  it('returns null when the query names no time, and ignores "may" the verb', () => {
    expect(parseTimeExpression('Tell me about grandpa', CLOCK)).toBeNull();
    expect(parseTimeExpression('the difference between cats and dogs', CLOCK)).toBeNull();
    expect(parseTimeExpression('the week after the party', CLOCK)).toBeNull();
    expect(parseTimeExpression('this may be wrong, but he may have 2 dogs', CLOCK)).toBeNull();
    expect(parseTimeExpression('what he did in may be a secret', CLOCK)).toBeNull();
  });

  it('counts days in the user time zone', () => {
    // 02:00 UTC on the 15th is still the 14th in New York: "yesterday" is the 13th there.
    const clock = new Date('2024-05-15T02:00:00Z');
    const r = parseTimeExpression('yesterday', clock, 'America/New_York')!;
    expect(r.from.toISOString()).toBe('2024-05-13T04:00:00.000Z');
    expect(r.to.toISOString()).toBe('2024-05-14T04:00:00.000Z');
    // An unknown zone falls back to UTC.
    expect(parseTimeExpression('yesterday', clock, 'Mars/Olympus')!.from.toISOString()).toBe(
      '2024-05-14T00:00:00.000Z',
    );
  });
});

describe('timeMatch', () => {
  const week = parseTimeExpression('last week', CLOCK)!;

  it('is 1 inside the range and falls to 0 one range length away', () => {
    expect(timeMatch(week, new Date('2024-05-08T12:00:00Z'))).toBe(1);
    expect(timeMatch(week, new Date('2024-05-13T00:00:00Z'))).toBeCloseTo(1, 5);
    expect(timeMatch(week, new Date('2024-05-16T12:00:00Z'))).toBeCloseTo(1 - 3.5 / 7, 5);
    expect(timeMatch(week, new Date('2024-04-20T00:00:00Z'))).toBe(0);
    expect(timeMatch(week, null)).toBe(0);
  });

  it('matches an item spanning the range (a summary) when they overlap', () => {
    expect(timeMatch(week, new Date('2024-04-01'), new Date('2024-05-07'))).toBe(1);
  });
});
