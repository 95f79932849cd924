import {
  cleanList,
  cleanParagraphs,
  cleanText,
  entryKey,
  entryText,
  isPlausibleBirthday,
  keywordScore,
  parseEntryKey,
} from './profile-fields.js';

const LEGACY = '0b9e4c1e-5d7a-4f3b-9a1c-2f6d8e7a9b10';

describe('profile fields', () => {
  it('cleans text, paragraphs and lists, blank meaning cleared', () => {
    expect(cleanText('  Sam \n  Byrne ')).toBe('Sam Byrne');
    expect(cleanText('   ')).toBeNull();
    expect(cleanText(null)).toBeNull();
    expect(cleanParagraphs('First  line\r\n\r\n\r\n\r\n  second ')).toBe('First line\n\nsecond');
    expect(cleanList([' Jazz', 'jazz ', '', 'gardening'])).toEqual(['Jazz', 'gardening']);
    expect(cleanList(['  '])).toBeNull();
    expect(cleanList(undefined)).toBeNull();
  });

  it('accepts a birthday only as a real date from 1900 to today', () => {
    const today = new Date('2026-03-01T12:00:00Z');
    expect(isPlausibleBirthday('1961-04-12', today)).toBe(true);
    expect(isPlausibleBirthday('2026-03-01', today)).toBe(true);
    expect(isPlausibleBirthday('2026-03-02', today)).toBe(false);
    expect(isPlausibleBirthday('1899-12-31', today)).toBe(false);
    expect(isPlausibleBirthday('2001-02-29', today)).toBe(false);
    expect(isPlausibleBirthday('2000-02-29', today)).toBe(true);
    expect(isPlausibleBirthday('12/04/1961', today)).toBe(false);
  });

  it('writes one sentence per entry', () => {
    expect(entryText('interests', ['gardening', 'jazz'])).toBe('Interests: gardening, jazz');
    expect(entryText('homeTown', 'Cork')).toBe('Home town: Cork');
  });

  it('keys entries by field, and a relationship by its legacy too, both ways', () => {
    expect(entryKey('interests', null)).toBe('interests');
    expect(entryKey('relationship', LEGACY)).toBe(`relationship:${LEGACY}`);
    expect(parseEntryKey('interests')).toEqual({ field: 'interests', legacyId: null });
    expect(parseEntryKey(`relationship:${LEGACY.toUpperCase()}`)).toEqual({
      field: 'relationship',
      legacyId: LEGACY,
    });
    expect(parseEntryKey('relationship')).toBeNull();
    expect(parseEntryKey('password')).toBeNull();
    expect(parseEntryKey('relationship:not-a-uuid')).toBeNull();
  });

  it('scores a question naming the field about the speaker, or a word of its value', () => {
    expect(keywordScore('what do you know about my interests?', 'interests', ['jazz'])).toBe(1);
    expect(keywordScore('What are my hobbies', 'interests', ['jazz'])).toBe(1);
    expect(keywordScore('When was I born?', 'birthday', '1961-04-12')).toBe(1);
    expect(keywordScore('What do you know about me', 'notes', 'Anything')).toBe(1);
    // Her name is not the speaker's.
    expect(keywordScore("What was grandma's maiden name?", 'preferredName', 'Sam')).toBe(0);
    expect(keywordScore('Tell me about the jazz club', 'interests', ['jazz', 'gardening'])).toBe(
      0.8,
    );
    expect(keywordScore('the weather at the pier', 'interests', ['jazz'])).toBe(0);
  });
});
