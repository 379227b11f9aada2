import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { summarisedWarn } from '../../src/log/index.js';
import { capturedLogger } from '../support/captured-log.js';

describe('summarisedWarn', () => {
  it('logs a message `perInterval` times an interval, then the next one after it with how many were not logged; each message on its own', () => {
    const { lines, logger } = capturedLogger();
    let now = 0;
    const warn = summarisedWarn(logger, { perInterval: 2, intervalMs: 60_000 }, () => now);
    for (let i = 0; i < 5; i += 1) warn({ i }, 'bad frame');
    warn({}, 'other mistake');
    now = 59_999;
    warn({ i: 5 }, 'bad frame');
    now = 60_000;
    warn({ i: 6 }, 'bad frame');
    warn({ i: 7 }, 'bad frame');
    warn({ i: 8 }, 'bad frame');
    expect(lines.map((l) => [l.msg, l.i, l.repeated, l.level])).toEqual([
      ['bad frame', 0, undefined, 40],
      ['bad frame', 1, undefined, 40],
      ['other mistake', undefined, undefined, 40],
      ['bad frame', 6, 4, 40],
      ['bad frame', 7, undefined, 40],
    ]);
    warn.flush();
    expect(lines.at(-1)).toMatchObject({ msg: 'repeated warnings, summarised', repeated: { 'bad frame': 1 } });
    // Flushed: nothing is counted twice, and a later warning is logged at once.
    warn.flush();
    warn({ i: 9 }, 'bad frame');
    expect(lines.slice(-2).map((l) => l.msg)).toEqual(['repeated warnings, summarised', 'bad frame']);
  });
});

describe('summarisedWarn over time', () => {
  it('logs a count left over when its interval ends, though the peer stopped repeating', () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const { lines, logger } = capturedLogger();
    const warn = summarisedWarn(logger, { perInterval: 1, intervalMs: 60_000 });
    for (let i = 0; i < 5; i += 1) warn({ i }, 'bad frame');
    expect(lines.map((l) => l.repeated)).toEqual([undefined]);
    vi.advanceTimersByTime(60_000);
    expect(lines.map((l) => [l.msg, l.repeated])).toEqual([
      ['bad frame', undefined],
      ['bad frame', 4],
    ]);
    // Reported once: nothing is counted twice at the close.
    warn.flush();
    expect(lines).toHaveLength(2);
  });
});
