import { isForgotComplaint } from './forgot-complaint.js';

describe('isForgotComplaint', () => {
  it.each([
    'You forgot my daughter’s name again.',
    "you've forgotten what I said about Dad",
    'Did you forget? He was a carpenter.',
    'I already told you, his name was Ben.',
    "I've told you this before!",
    'I told you before that he lived in Leeds.',
    'Like I said, she never drove.',
    'How many times do I have to say it?',
    "Don't you remember what I said yesterday?",
    "You don't remember anything about him.",
    'You keep forgetting that.',
  ])('English complaint: %s', (text) => {
    expect(isForgotComplaint(text)).toBe(true);
  });

  it.each([
    '我说过他是木匠。',
    '我已经告诉过你了，她叫小芳。',
    '我跟你讲过这件事。',
    '我之前提过他的工作。',
    '你忘了吗？我奶奶住在上海。',
    '你又忘记了。',
    '你怎么忘了他的名字',
    '你不记得了吗？',
    '我說過他住在台北。',
    '你忘記了嗎',
  ])('Chinese complaint: %s', (text) => {
    expect(isForgotComplaint(text)).toBe(true);
  });

  it.each([
    "Don't forget to ask about the war.",
    'I told my son about the farm.',
    'My grandfather forgot his keys all the time.',
    'Do you remember the summer in Devon? Tell me about it.',
    'He said he would come back.',
    'I forgot where I put the photos.',
    '他说过要回来。',
    '奶奶总是忘了关灯。',
    '我记得那个夏天。',
    'Let me tell you about my mother.',
  ])('not a complaint: %s', (text) => {
    expect(isForgotComplaint(text)).toBe(false);
  });
});
