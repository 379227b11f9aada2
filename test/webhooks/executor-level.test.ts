import { describe, expect, it } from 'vitest';
import { executorLevel } from '../../src/webhooks/index.js';

const level = (queueSize: number, lastRequestMs: number | null, consecutiveFailures = 0, deadLetters = 0) =>
  executorLevel({ queueSize, lastRequestMs, consecutiveFailures, deadLetters });

describe('executor health level (interface document section 8, contract section 7)', () => {
  it('warns above 5 queued and 500 ms, is critical above 100 queued and 5000 ms, and takes the worse of both', () => {
    expect(level(5, 500)).toEqual({ status: 'ok', reasons: [] });
    expect(level(6, null)).toEqual({ status: 'warning', reasons: ['queue size 6 > 5'] });
    expect(level(100, 500.4)).toMatchObject({
      status: 'warning',
      reasons: ['queue size 100 > 5', 'last request 500.4 ms > 500 ms'],
    });
    expect(level(101, 10)).toEqual({ status: 'critical', reasons: ['queue size 101 > 100'] });
    expect(level(0, 5000)).toMatchObject({ status: 'warning' });
    expect(level(0, 5001)).toEqual({ status: 'critical', reasons: ['last request 5001 ms > 5000 ms'] });
    expect(level(7, 6000).status).toBe('critical');
  });

  it('warns from 3 failed attempts in a row, is critical from 100, and while a dead letter is not replayed', () => {
    expect(level(0, 10, 2).status).toBe('ok');
    expect(level(0, 10, 3)).toEqual({ status: 'warning', reasons: ['failed attempts in a row 3 > 2'] });
    expect(level(0, 10, 99).status).toBe('warning');
    expect(level(0, 10, 100).status).toBe('critical');
    expect(level(0, null, 0, 8)).toEqual({ status: 'critical', reasons: ['8 dead letters not replayed'] });
  });
});
