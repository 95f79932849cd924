import type { IncomingMessage } from 'node:http';
import { ConfigValidationError } from '../../config/app-config.js';
import { loadAppConfig } from '../../app.config.js';
import { clientAddress, parseTrustProxy } from './trust-proxy.js';

const request = (remoteAddress: string, forwardedFor?: string) =>
  ({
    socket: { remoteAddress },
    connection: { remoteAddress },
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  }) as unknown as IncomingMessage;

describe('TRUST_PROXY', () => {
  it("reads Express's `trust proxy` forms, off by default", () => {
    expect(loadAppConfig({}).env.TRUST_PROXY).toBe(false);
    expect(parseTrustProxy('false')).toBe(false);
    expect(parseTrustProxy('0')).toBe(false);
    expect(parseTrustProxy('true')).toBe(true);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('loopback')).toEqual(['loopback']);
    expect(parseTrustProxy(' 10.0.0.0/8, 127.0.0.1 ,::1')).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      '::1',
    ]);
  });

  it('is checked at boot with the rest of the configuration', () => {
    let error: unknown;
    try {
      loadAppConfig({ TRUST_PROXY: 'loopback, the-proxy', PORT: 'abc' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigValidationError);
    const problems = (error as ConfigValidationError).problems.join('\n');
    expect(problems).toMatch(/PORT must be a whole number/);
    expect(problems).toMatch(
      /TRUST_PROXY must be false, true, a number of hops, or addresses.*the-proxy.*\(got "loopback, the-proxy"\)/,
    );
  });

  it('believes X-Forwarded-For only from a trusted proxy', () => {
    // Off: a client cannot choose the address its anonymous budget is counted against.
    expect(clientAddress(request('127.0.0.1', '203.0.113.9'), false)).toBe('127.0.0.1');
    // Behind a proxy on loopback: the client it forwards.
    expect(clientAddress(request('127.0.0.1', '203.0.113.9'), ['loopback'])).toBe('203.0.113.9');
    // From anywhere else the header is the sender's own claim.
    expect(clientAddress(request('198.51.100.7', '203.0.113.9'), ['loopback'])).toBe(
      '198.51.100.7',
    );
    // One hop: the nearest forwarded address, not one the client put further back.
    expect(clientAddress(request('10.0.0.2', '6.6.6.6, 203.0.113.9'), 1)).toBe('203.0.113.9');
    expect(clientAddress(request('10.0.0.2'), ['loopback'])).toBe('10.0.0.2');
  });
});
