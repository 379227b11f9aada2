import { describe, expect, it } from 'vitest';
import { executorLevel } from '../../src/webhooks/index.js';

describe('executor health level (interface document section 8)', () => {
  it('warns above 5 queued and 500 ms, is critical above 100 queued and 5000 ms, and takes the worse of both', () => {
    expect(executorLevel(5, 500)).toEqual({ status: 'ok', reasons: [] });
    expect(executorLevel(6, null)).toEqual({ status: 'warning', reasons: ['queue size 6 > 5'] });
    expect(executorLevel(100, 500.4)).toMatchObject({ status: 'warning', reasons: ['queue size 100 > 5', 'last request 500.4 ms > 500 ms'] });
    expect(executorLevel(101, 10)).toEqual({ status: 'critical', reasons: ['queue size 101 > 100'] });
    expect(executorLevel(0, 5000)).toMatchObject({ status: 'warning' });
    expect(executorLevel(0, 5001)).toEqual({ status: 'critical', reasons: ['last request 5001 ms > 5000 ms'] });
    expect(executorLevel(7, 6000).status).toBe('critical');
  });
});
