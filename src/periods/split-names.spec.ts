import { splitNames } from './period-summary-builder.service.js';

describe('splitNames', () => {
  it('tells places by the words around them or their last word, and drops holidays', () => {
    const text =
      'Grandad took Ruth to Halifax every Sunday, past King Cross Road, until Christmas.';
    expect(splitNames(['Ruth', 'Halifax', 'King Cross Road', 'Christmas'], text)).toEqual({
      people: ['Ruth'],
      places: ['Halifax', 'King Cross Road'],
    });
  });
});
