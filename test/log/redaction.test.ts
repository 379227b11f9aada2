import { describe, expect, it } from 'vitest';
import { capturedLogger } from '../support/captured-log.js';

describe('log redaction', () => {
  it('replaces a secret key at the top of a line, one level down and two levels down, in arrays too', () => {
    const { logger, lines } = capturedLogger();
    logger.info(
      {
        password: 'p1',
        upstream: { clientSecret: 'p2', url: 'wss://csms' },
        request: { headers: { authorization: 'Basic p3', accept: 'json' } },
        attempts: [{ token: 'p4' }],
        plain: 'kept',
      },
      'with secrets',
    );
    expect(lines[0]).toMatchObject({
      password: '[redacted]',
      upstream: { clientSecret: '[redacted]', url: 'wss://csms' },
      request: { headers: { authorization: '[redacted]', accept: 'json' } },
      attempts: [{ token: '[redacted]' }],
      plain: 'kept',
      msg: 'with secrets',
    });
    expect(JSON.stringify(lines[0])).not.toMatch(/p[1-4]/);
  });

  it("redacts a child logger's bindings and leaves the caller's objects as they were", () => {
    const { logger, lines } = capturedLogger();
    const fields = { auth: { passphrase: 'p5' }, stationId: 'CP1' };
    logger.child({ accessToken: 'p6', stationId: 'CP1' }).warn(fields, 'child');
    expect(lines[0]).toMatchObject({ accessToken: '[redacted]', auth: { passphrase: '[redacted]' }, stationId: 'CP1' });
    expect(JSON.stringify(lines[0])).not.toMatch(/p[56]/);
    expect(fields).toEqual({ auth: { passphrase: 'p5' }, stationId: 'CP1' });
  });

  it('redacts what an error carries and still logs it as that error', () => {
    const { logger, lines } = capturedLogger();
    const err = Object.assign(new TypeError('refused'), { options: { password: 'p7' }, code: 'E_AUTH' });
    logger.error({ err }, 'failed');
    expect(lines[0]!.err).toMatchObject({
      type: 'TypeError',
      message: 'refused',
      code: 'E_AUTH',
      options: { password: '[redacted]' },
    });
    expect(lines[0]!.err).toHaveProperty('stack', err.stack);
    expect(err.options.password).toBe('p7');
  });

  it('writes a line without secrets as given: numbers, booleans, nulls, nested objects and errors', () => {
    const { logger, lines } = capturedLogger();
    logger.error({ n: 1.5, ok: true, none: null, nested: { a: [1, 2] }, err: new Error('boom') }, 'plain');
    expect(lines[0]).toMatchObject({ n: 1.5, ok: true, none: null, nested: { a: [1, 2] }, msg: 'plain' });
    expect(lines[0]!.err).toMatchObject({ type: 'Error', message: 'boom' });
  });
});
