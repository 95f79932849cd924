import { canonicalFirstPerson, normalizeMemory, slotOf } from './memory-text.js';

describe('memory text rules', () => {
  it('normalizes case, quotes, punctuation and spacing', () => {
    expect(normalizeMemory('  I LOVE  “Jazz” music!! ')).toBe('i love jazz music');
    expect(normalizeMemory('I’m from Porto.')).toBe("i'm from porto");
    expect(normalizeMemory('I live in Porto.')).toBe(normalizeMemory('i live in porto'));
  });

  it('maps third-person model phrasing onto first person', () => {
    expect(canonicalFirstPerson(normalizeMemory('The user lives in Porto.'))).toBe(
      'i live in porto',
    );
    expect(canonicalFirstPerson(normalizeMemory("The user's favourite colour is blue."))).toBe(
      'my favourite colour is blue',
    );
    expect(canonicalFirstPerson(normalizeMemory("I'm married."))).toBe('i am married');
  });

  it('finds single-valued slots in both phrasings', () => {
    expect(slotOf('I live in Porto.')).toEqual({ key: 'home', value: 'porto' });
    expect(slotOf('The user now lives in Lisbon.')).toEqual({ key: 'home', value: 'lisbon' });
    expect(slotOf('I work as a nurse.')).toEqual({ key: 'occupation', value: 'nurse' });
    expect(slotOf('My favourite colour is green.')).toEqual({
      key: 'favourite colour',
      value: 'green',
    });
    expect(slotOf("I'm 42 years old.")).toEqual({ key: 'age', value: '42' });
  });

  it('gives likes and dislikes of the same thing the same slot and opposite values', () => {
    const love = slotOf('I really love jazz.');
    const hate = slotOf("I don't like jazz anymore.");
    expect(love).toEqual({ key: 'feeling about jazz', value: 'like' });
    expect(hate).toEqual({ key: 'feeling about jazz', value: 'dislike' });
    expect(slotOf('The user hates jazz.')).toEqual(hate);
  });

  it('declares no slot when a sentence says several things', () => {
    expect(slotOf('I live in Porto and work as a nurse.')).toBeNull();
    expect(slotOf('My sister Anna walks with me every Sunday.')).toBeNull();
  });
});
