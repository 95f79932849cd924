import { markedName } from '../identity/display-name.js';
import { labelledContent, openAiName, openAiReplyMessages } from './reply-messages.js';

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

describe("a together conversation's turns as the model is given them", () => {
  it("keeps to OpenAI's characters for `name`", () => {
    expect(openAiName(markedName('Olga', 'A member'))).toBe('Olga');
    expect(openAiName('"Ana María"')).toBe('Ana_Maria');
    expect(openAiName('Jean-Luc O’Neil')).toBe('Jean-Luc_O_Neil');
    expect(openAiName('  "a\\"b"  ')).toBe('a_b');
    expect(openAiName('李雷')).toBeNull();
    expect(openAiName('"   "')).toBeNull();
    const long = openAiName('x'.repeat(63) + ' y'.repeat(10))!;
    expect(long).toMatch(NAME);
    expect(long.length).toBeLessThanOrEqual(64);
  });

  it('names each member distinctly, labels their words, and leaves the agent and a lone member as they are', () => {
    const member = (speaker: string, content: string) => ({
      role: 'USER' as const,
      content,
      speaker: markedName(speaker, 'A member'),
    });
    const messages = openAiReplyMessages({
      system: 'You remember Opa.',
      messages: [
        member('Ana María', 'Hello.'),
        member('Ana-María', 'Me too.'),
        member('李雷', 'Hi.'),
        member('王芳', 'Hi there.'),
        { role: 'ASSISTANT', content: 'Hello, all of you.' },
        member('Ana María', 'What did he cook?'),
        { role: 'USER', content: 'Said alone.' },
      ],
    });
    expect(messages).toEqual([
      { role: 'system', content: 'You remember Opa.' },
      { role: 'user', name: 'Ana_Maria', content: '"Ana María": Hello.' },
      { role: 'user', name: 'Ana-Maria', content: '"Ana-María": Me too.' },
      { role: 'user', name: 'member_3', content: '"李雷": Hi.' },
      { role: 'user', name: 'member_4', content: '"王芳": Hi there.' },
      { role: 'assistant', content: 'Hello, all of you.' },
      { role: 'user', name: 'Ana_Maria', content: '"Ana María": What did he cook?' },
      { role: 'user', content: 'Said alone.' },
    ]);
    // Two names alike once sanitized stay two participants.
    const alike = openAiReplyMessages({
      system: '',
      messages: [member('Ana María', 'a'), member('Ana Maria', 'b'), member('Ana  Maria!', 'c')],
    });
    expect(alike.slice(1).map((m) => (m as { name?: string }).name)).toEqual([
      'Ana_Maria',
      'Ana_Maria_2',
      'Ana_Maria_3',
    ]);
    expect(labelledContent({ role: 'USER', content: 'x' })).toBe('x');
  });
});
