import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MIN_PROBE_ROUNDS, STALL_BOUND_MS } from '../support/bystander-probe.js';
import { installedNodeArgs } from '../support/cli.js';
import { TestCsms } from '../support/csms.js';
import { CP001, CP002, eventually, PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';
import { bystanderProbeForTest, spawnDaemonForTest, stationForTest, tempSiteForTest } from '../support/for-test.js';
import { UPLINK_WAIT_MS, uplinkConfig } from '../support/uplink.js';

const CALLS = 4000;
const CALL_BYTES = 60 * 1024;

/** The resident set of a process, in kB, as the kernel counts it. */
function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

describe("a CSMS's call flood (docs/operating/security.md#security)", () => {
  it(
    `${CALLS} calls of 60 KB sent at once: one reaches the station, the others get a CALLERROR at once, RSS grows < 64 MB, another station and /health answer within 1 s`,
    async () => {
      const csms = await TestCsms.startForTest({ callConcurrency: CALLS });
      const temp = tempSiteForTest({ log: { level: 'info' }, ...siteWith([], [CP001, CP002]), ...uplinkConfig(csms) });
      // As installed: the unit's Node.js options bound V8's young generation, which a flood of 60 KB frames fills.
      const daemon = await spawnDaemonForTest(temp.configPath, { built: true, nodeArgs: installedNodeArgs() });
      const pid = daemon.child.pid!;
      const station = await stationForTest(daemon.ready.ocppUrl, 'CP001');
      let release = (): void => undefined;
      station.handle(
        'DataTransfer',
        (_params, signal) =>
          new Promise((resolve) => {
            release = () => resolve({ status: 'Accepted' });
            signal.addEventListener('abort', release);
          }),
      );
      await station.boot();
      await eventually(() => csms.of('BootNotification').length > 0, UPLINK_WAIT_MS, 'the uplink boot');

      const data = 'x'.repeat(CALL_BYTES);
      const first = csms.call('CP001', 'DataTransfer', { vendorId: 'flood', messageId: 'first', data });
      await eventually(() => station.received.some((r) => r.action === 'DataTransfer'), UPLINK_WAIT_MS, 'the first');
      const bystander = await bystanderProbeForTest({ ...daemon.ready, identity: 'CP002' });
      const before = rssKb(pid);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssKb(pid))), 20);
      let answers: Array<PromiseSettledResult<unknown>>;
      try {
        answers = await Promise.allSettled(
          Array.from({ length: CALLS - 1 }, (_, i) =>
            csms.call('CP001', 'DataTransfer', { vendorId: 'flood', messageId: String(i), data }),
          ),
        );
        peak = Math.max(peak, rssKb(pid));
      } finally {
        clearInterval(sampler);
      }
      const { slowestHealthMs, slowestHeartbeatMs, samples } = await bystander.stop();
      expect(samples).toBeGreaterThanOrEqual(MIN_PROBE_ROUNDS);
      expect(slowestHeartbeatMs).toBeLessThan(STALL_BOUND_MS);
      expect(slowestHealthMs).toBeLessThan(STALL_BOUND_MS);
      expect(peak - before, `RSS ${before} kB -> peak ${peak} kB`).toBeLessThan(64 * 1024);
      expect(answers.every((a) => a.status === 'rejected')).toBe(true);
      const codes = new Set(
        answers.map((a) => {
          const { rpcErrorCode, message } = (a as PromiseRejectedResult).reason as {
            rpcErrorCode: string;
            message: string;
          };
          return `${rpcErrorCode}: ${message}`;
        }),
      );
      expect([...codes]).toEqual(['GenericError: a call from the CSMS is already in progress']);
      expect(station.received.filter((r) => r.action === 'DataTransfer')).toHaveLength(1);

      // The call in progress goes on, and once answered the next one is taken.
      release();
      expect(await first).toEqual({ status: 'Accepted' });
      const next = csms.call('CP001', 'DataTransfer', { vendorId: 'flood', messageId: 'next', data: 'small' });
      await eventually(() => station.received.filter((r) => r.action === 'DataTransfer').length === 2, 10_000, 'next');
      release();
      expect(await next).toEqual({ status: 'Accepted' });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
