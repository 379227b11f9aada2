import { describe, expect, it, onTestFinished } from 'vitest';
import { connectServiceManager, watchdogIntervalMs } from '../../src/service/index.js';
import { notifySocketForTest } from '../support/for-test.js';
import { capturedLogger } from '../support/captured-log.js';

/** connectServiceManager for the running test: told the service is stopping when it finishes (ends the watchdog). */
function serviceForTest(
  options: Parameters<typeof connectServiceManager>[0],
): ReturnType<typeof connectServiceManager> {
  const service = connectServiceManager(options);
  onTestFinished(() => service.stopping());
  return service;
}

describe('service manager notifications through systemd-notify', () => {
  it('sends READY, then watchdog pings, RELOADING and READY again, and STOPPING, in that order', async () => {
    const socket = await notifySocketForTest();
    const { logger } = capturedLogger();
    const service = serviceForTest({
      env: { ...process.env, NOTIFY_SOCKET: socket.path, WATCHDOG_USEC: '200000' },
      logger,
      alive: () => true,
    });

    await service.ready('serving: test');
    expect(await socket.waitFor('READY=1')).toEqual(['READY=1', 'STATUS=serving: test', `MAINPID=${process.pid}`]);
    const firstPing = socket.messages.findIndex((m) => m.includes('WATCHDOG=1'));
    await socket.waitFor('WATCHDOG=1', { from: Math.max(firstPing, 0) + 1 });

    await service.reloading();
    await service.reloaded('serving: test');
    await service.stopping();
    const states = socket.messages
      .filter((m) => !m.includes('WATCHDOG=1') && !m.includes('BARRIER=1'))
      .map((m) => m[0]);
    expect(states).toEqual(['READY=1', 'RELOADING=1', 'READY=1', 'STOPPING=1']);
  });

  it('withholds the watchdog ping while the liveness check fails, and says so', async () => {
    const socket = await notifySocketForTest();
    const { logger, lines } = capturedLogger();
    let alive = true;
    const service = serviceForTest({
      env: { ...process.env, NOTIFY_SOCKET: socket.path, WATCHDOG_USEC: '100000' },
      logger,
      alive: () => alive,
    });
    await service.ready('serving: test');
    await socket.waitFor('WATCHDOG=1');

    alive = false;
    await expect
      .poll(() => lines.filter((l) => String(l.msg).startsWith('liveness check failed')).length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    const pingsWhileDead = socket.messages.filter((m) => m.includes('WATCHDOG=1')).length;
    await expect
      .poll(() => lines.filter((l) => String(l.msg).startsWith('liveness check failed')).length, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(4);
    // At most one ping was already on its way when the check started failing.
    expect(socket.messages.filter((m) => m.includes('WATCHDOG=1')).length).toBeLessThanOrEqual(pingsWhileDead + 1);

    alive = true;
    await socket.waitFor('WATCHDOG=1', { from: socket.messages.length });
  });

  it('does nothing outside systemd, and degrades with a warning when systemd-notify is missing', async () => {
    const outside = capturedLogger();
    const service = connectServiceManager({
      env: { PATH: process.env.PATH },
      logger: outside.logger,
      alive: () => true,
    });
    await service.ready('serving: test');
    await service.stopping();
    expect(outside.lines).toEqual([]);

    const socket = await notifySocketForTest();
    const missing = capturedLogger();
    const degraded = connectServiceManager({
      env: { PATH: '/nonexistent', NOTIFY_SOCKET: socket.path, WATCHDOG_USEC: '100000' },
      logger: missing.logger,
      alive: () => true,
    });
    await degraded.ready('serving: test');
    await degraded.stopping();
    expect(missing.lines.map((l) => l.msg)).toEqual([
      'NOTIFY_SOCKET is set but systemd-notify is not installed: readiness and watchdog notifications are off',
    ]);
    expect(socket.messages).toEqual([]);
  });

  it('reads the watchdog interval systemd sets for this process only', () => {
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' })).toBe(30_000);
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.pid) })).toBe(30_000);
    expect(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '1' })).toBeUndefined();
    expect(watchdogIntervalMs({})).toBeUndefined();
  });
});
