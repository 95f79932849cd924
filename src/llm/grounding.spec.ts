import { echoesPromptExample, factProblem, memoryProblem, summaryProblem } from './grounding.js';
import { PROMPT_EXAMPLES } from './prompts.js';

describe('grounding (what real models got past the schema in issue 38)', () => {
  it('keeps a memory the user’s own words carry, reworded', () => {
    expect(
      memoryProblem('The user lives in Porto.', 'I live in Porto, by the river.', undefined),
    ).toBeNull();
    expect(
      memoryProblem('The user works as a nurse.', 'I have been a nurse for ten years.', undefined),
    ).toBeNull();
  });

  it('refuses the other speaker’s sentences, compliments to the user and the model’s own reply', () => {
    const user = 'I finally painted the kitchen.';
    expect(
      memoryProblem(
        'The user has a lovely garden in Leeds.',
        user,
        'My lovely garden in Leeds is in bloom.',
      ),
    ).toBe('it is what the other side said, not the user');
    expect(
      memoryProblem('You are so talented and kind.', user, 'You are so talented and kind!'),
    ).not.toBeNull();
    expect(
      memoryProblem('My new job has changed your career plans!', 'I started a new job.', undefined),
    ).not.toBeNull();
  });

  it('refuses every prompt example and anything with a placeholder', () => {
    for (const example of PROMPT_EXAMPLES) expect(echoesPromptExample(example)).toBe(true);
    expect(
      memoryProblem('The user has a <RELATIVE> named <NAME>.', 'My sister Anna visits.', undefined),
    ).toBe('it repeats a prompt example');
    expect(echoesPromptExample('The user has a sister named Anna.')).toBe(false);
  });

  it('keeps a fact that names the legacy and its member turn says; refuses a copied turn', () => {
    const said = ['Dad worked as a carpenter for thirty years, Joe Miller was his name.'];
    expect(
      factProblem('Joe Miller worked as a carpenter for thirty years.', 'Joe Miller', said),
    ).toBeNull();
    expect(factProblem('He worked as a carpenter.', 'Joe Miller', said)).toBe(
      'it does not name Joe Miller',
    );
    expect(factProblem('I remember Joe building boats with my brother.', 'Joe Miller', said)).toBe(
      'it is a turn, not a fact',
    );
    expect(factProblem('Joe Miller flew fighter jets.', 'Joe Miller', said)).toBe(
      'its source turns do not say it',
    );
  });

  it('refuses a summary that is a name, a timestamp, or not about the span', () => {
    const span = ['Caroline went to a support group and felt accepted there.'];
    expect(summaryProblem('Caroline', span)).toBe('it is not a sentence');
    expect(summaryProblem(',2023-07-12T16:33:00.000Z', span)).toBe('it is not a sentence');
    expect(
      summaryProblem('The user talked about fishing trips on the lake with friends.', span),
    ).toBe('the span does not say it');
    expect(
      summaryProblem(
        'Caroline talked warmly about the support group, where she felt accepted.',
        span,
      ),
    ).toBeNull();
  });
});
