import { savedFileName } from './story-files.js';
import { StoryFormat } from './story.enums.js';

describe('savedFileName: the name an original leaves Keepsake under', () => {
  it('keeps a name that ends as its format does', () => {
    expect(savedFileName('Letters.pdf', 'x', StoryFormat.PDF)).toBe('Letters.pdf');
    expect(savedFileName('notes.MD', 'x', StoryFormat.MARKDOWN)).toBe('notes.MD');
    expect(savedFileName('eulogy.docx', 'x', StoryFormat.DOCX)).toBe('eulogy.docx');
  });

  it('adds the format’s ending to any other name, so that nothing opens as a page that runs', () => {
    expect(savedFileName('page.html', 'x', StoryFormat.TEXT)).toBe('page.html.txt');
    expect(savedFileName('drawing.svg', 'x', StoryFormat.TEXT)).toBe('drawing.svg.txt');
    expect(savedFileName('feed.xml', 'x', StoryFormat.MARKDOWN)).toBe('feed.xml.md');
    expect(savedFileName('scan.html', 'x', StoryFormat.PDF)).toBe('scan.html.pdf');
    expect(savedFileName('notes', 'x', StoryFormat.TEXT)).toBe('notes.txt');
  });

  it('names a story written in the app after its title, made safe', () => {
    expect(savedFileName(null, 'The tin box', StoryFormat.MARKDOWN)).toBe('The tin box.md');
    expect(savedFileName(null, '../../etc/x.html', StoryFormat.MARKDOWN)).toBe('_.._etc_x.html.md');
    expect(savedFileName('   ', '', StoryFormat.TEXT)).toBe('original.txt');
  });
});
