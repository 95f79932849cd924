import { ConfigValidationError } from '../config/app-config.js';
import { loadAppConfig } from '../app.config.js';

describe('limits configuration', () => {
  it('has production defaults', () => {
    const env = loadAppConfig({}).env;
    expect(env.INVITATION_TTL).toBe(14 * 24 * 60 * 60 * 1000);
    expect(env.INVITATIONS_PER_LEGACY_PER_DAY).toBe(50);
    expect(env.MAX_LEGACIES_PER_USER).toBe(25);
    expect(env.MAX_MEMBERS_PER_LEGACY).toBe(100);
    expect(env.CONVERSATIONS_PER_USER_PER_DAY).toBe(200);
    expect(env.IMPORTS_PER_USER_PER_HOUR).toBe(20);
  });

  it('reads durations and counts', () => {
    const env = loadAppConfig({ INVITATION_TTL: '48h', MAX_MEMBERS_PER_LEGACY: '12' }).env;
    expect(env.INVITATION_TTL).toBe(48 * 60 * 60 * 1000);
    expect(env.MAX_MEMBERS_PER_LEGACY).toBe(12);
  });

  it('refuses bad values at boot, all at once', () => {
    let error: unknown;
    try {
      loadAppConfig({
        INVITATION_TTL: 'two weeks',
        INVITATIONS_PER_LEGACY_PER_DAY: '0',
        MAX_LEGACIES_PER_USER: 'many',
        MAX_MEMBERS_PER_LEGACY: '1',
        CONVERSATIONS_PER_USER_PER_DAY: '-5',
        IMPORTS_PER_USER_PER_HOUR: '1.5',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigValidationError);
    const problems = (error as ConfigValidationError).problems.join('\n');
    expect(problems).toMatch(/INVITATION_TTL must be a duration/);
    expect(problems).toMatch(/INVITATIONS_PER_LEGACY_PER_DAY must be between 1/);
    expect(problems).toMatch(/MAX_LEGACIES_PER_USER must be a whole number/);
    expect(problems).toMatch(/MAX_MEMBERS_PER_LEGACY must be between 2/);
    expect(problems).toMatch(/CONVERSATIONS_PER_USER_PER_DAY must be between 1/);
    expect(problems).toMatch(/IMPORTS_PER_USER_PER_HOUR must be a whole number/);
  });
});
