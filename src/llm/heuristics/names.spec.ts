import { eventsIn, splitNames } from './names.js';

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

describe('eventsIn', () => {
  it('finds the events people talk about, with the place said right after', () => {
    expect(eventsIn('We went on a trip to Lisbon the summer after the wedding.')).toEqual([
      'a trip to Lisbon',
      'the wedding',
    ]);
    expect(eventsIn('He never talked about the war, but his retirement party was huge.')).toEqual([
      'the war',
      'his retirement party',
    ]);
    expect(eventsIn('Christmas at the farm was always loud.')).toEqual(['Christmas']);
    expect(eventsIn('He grew tomatoes every summer.')).toEqual([]);
  });
});
