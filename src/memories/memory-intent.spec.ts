import { parseMemoryIntent } from './memory-intent.js';

describe('memory commands in chat', () => {
  it.each([
    ['Remember that I love gardening.', 'I love gardening.'],
    ['remember that my sister is called Ana', 'My sister is called Ana'],
    ['Please remember I take the bus on Mondays', 'I take the bus on Mondays'],
    ['Please remember: my birthday is in May', 'My birthday is in May'],
    ['Please remember that Grandpa hated onions', 'Grandpa hated onions'],
    ['Can you remember that I am vegetarian?', null],
    ['Could you please remember that I am vegetarian.', 'I am vegetarian.'],
    ['Hey, remember that I moved to Porto', 'I moved to Porto'],
    ['Remember: I prefer short answers', 'I prefer short answers'],
    ['Keep in mind that I work nights', 'I work nights'],
  ])('saves %j', (text, content) => {
    expect(parseMemoryIntent(text)).toEqual(content === null ? null : { kind: 'SAVE', content });
  });

  it.each([
    ['记住我喜欢喝茶', '我喜欢喝茶'],
    ['请记住我女儿叫小美。', '我女儿叫小美。'],
    ['请记住：我每周日去看奶奶', '我每周日去看奶奶'],
    ['帮我记住爷爷喜欢钓鱼', '爷爷喜欢钓鱼'],
  ])('saves the Chinese %j', (text, content) => {
    expect(parseMemoryIntent(text)).toEqual({ kind: 'SAVE', content });
  });

  it.each([
    ['Forget what I said about my job', 'my job'],
    ['please forget everything I told you about the divorce.', 'the divorce'],
    ['Can you forget what I mentioned about Porto?', 'Porto'],
    ['Forget about my sister', 'my sister'],
    ['forget that I love gardening', 'I love gardening'],
    ['忘记我说的关于工作的事', '工作'],
    ['请忘掉我说过的关于前男友的话。', '前男友'],
    ['忘记关于搬家的', '搬家'],
  ])('forgets %j', (text, query) => {
    expect(parseMemoryIntent(text)).toEqual({ kind: 'FORGET', query });
  });

  it.each([
    "Don't remember that",
    'Please don’t remember that.',
    'do not remember this',
    "Don't save that!",
    'Forget that.',
    'forget this please',
    'Forget what I just said',
    '别记住这个',
    '不要记住那个。',
    '别记这个了',
    '忘掉这个吧',
    'Forget about that.',
  ])('forgets the previous turn for %j', (text) => {
    expect(parseMemoryIntent(text)).toEqual({ kind: 'FORGET_LAST' });
  });

  it.each([
    ['What do you remember about my sister?', 'my sister'],
    ['what do you know about Grandpa Joe', 'Grandpa Joe'],
    ['What did I tell you about the garden?', 'the garden'],
    ['Do you remember anything about his boat?', 'his boat'],
    ['你记得关于爷爷的什么？', '爷爷'],
    ['你还记得关于我工作的哪些事', '我工作'],
    ['关于钓鱼，你记得什么？', '钓鱼'],
  ])('looks up %j', (text, query) => {
    expect(parseMemoryIntent(text)).toEqual({ kind: 'LOOKUP', query });
  });

  it.each([
    'I remember the beach',
    'I remember that he loved the beach.',
    'Do you remember his boat?',
    'Remember when we went fishing?',
    'Remember that time we went to the lake?',
    'Remember that summer in Porto.',
    "Don't forget to call mum",
    "I can't forget what he said about the war",
    'I forget what I said about him',
    'He always said: remember that you are loved.',
    'We should remember that day forever',
    'Remember',
    'Remember that?',
    'remember that',
    'What do you remember?',
    'I wonder what you remember about him',
    '我记得海边',
    '我还记得他说过的话',
    '你记得吗？',
    '记住了',
    '记住了吗？',
    '他总是说要记住我们的家',
    '我忘记关于他的事了',
    'Oh, forget about it',
    'Forget it.',
    'forget about him',
    '',
    '   ',
  ])('treats %j as an ordinary turn', (text) => {
    expect(parseMemoryIntent(text)).toBeNull();
  });
});
