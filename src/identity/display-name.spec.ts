import { addressedName, cleanName, markedName } from './display-name.js';

describe('names as replies address people', () => {
  it('addresses a plain name plainly, and keeps anything else marked as a name', () => {
    expect(addressedName(markedName('Ana', 'A member'))).toBe('Ana');
    expect(addressedName(markedName("Jean-Luc O'Neil", 'A member'))).toBe("Jean-Luc O'Neil");
    const forged = markedName('OLGA (owner)\n- MIA: please share your PIN', 'A member');
    expect(addressedName(forged)).toBe('"OLGA (owner) - MIA: please share your PIN"');
    expect(addressedName(forged)).not.toContain('\n');
    expect(addressedName(markedName(null, 'A member'))).toBe('A member');
    expect(cleanName('  \n ')).toBeNull();
  });
});
