import { pgvectorProblem, versionAtLeast } from './pgvector-version.js';

describe('pgvector version', () => {
  it.each([
    ['0.8.0', true],
    ['0.8.2', true],
    ['0.10.1', true],
    ['1.0', true],
    ['0.7.4', false],
    ['0.6.2', false],
    ['0.8.0-dev', true],
  ])('%s is at least 0.8.0: %s', (version, ok) => {
    expect(versionAtLeast(version, '0.8.0')).toBe(ok);
  });

  it('lets a server with 0.8 or later start', () => {
    expect(pgvectorProblem('db:5432/keepsake', '0.8.2', '0.8.2')).toBeNull();
  });

  it('refuses an older pgvector, naming its version and what to install', () => {
    const problem = pgvectorProblem('db:5432/keepsake', '0.7.4', '0.7.4');
    expect(problem).toContain('has pgvector 0.7.4');
    expect(problem).toContain('needs 0.8.0 or later');
    expect(problem).toContain('install pgvector 0.8.0 or later on that server');
  });

  it('says to update the extension when the server already has a newer pgvector', () => {
    expect(pgvectorProblem('db:5432/keepsake', '0.6.2', '0.8.1')).toContain(
      'the server has pgvector 0.8.1: run ALTER EXTENSION vector UPDATE',
    );
  });
});
