import { statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { METER_FLUSH_MS, METER_MODELS } from '../../src/modbus/index.js';
import { DATABASE_FILE } from '../../src/store/index.js';
import { HOLD_MS } from '../../src/store/group-commit.js';
import { TestCsms } from '../support/csms.js';
import { startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { MeterSimulator } from '../support/meter-simulator.js';
import { eventually, meterConfig, meterHealth } from '../modbus/harness.js';

const STATIONS = ['CP001', 'CP002', 'CP003', 'CP004', 'CP005'];

/**
 * The longest period of anything the idle daemon does on a timer: the meters' flush and the commit of held
 * bookkeeping (2 s each); the uplink's acknowledgement flush (0.5 s), the key check and the rollout tick (1 s) are
 * shorter. The delivery poll (5 s) runs only in the delivery thread, which a site without webhooks does not start.
 */
const LONGEST_PERIOD_MS = Math.max(METER_FLUSH_MS, HOLD_MS);
/** Every timer above fires at least twice within it, each heartbeat and meter reading many times. */
const WINDOW_MS = 2 * LONGEST_PERIOD_MS;
const HEARTBEAT_EVERY_MS = 250;
/** The meters are polled every 200 ms (meterConfig): a third of the polls the window holds, for a loaded machine. */
const MIN_READINGS = WINDOW_MS / 200 / 3;

/**
 * Five heartbeating stations and two polled meters whose readings do not change, for WINDOW_MS: the site is busy
 * all along (the meters read again and again, every heartbeat heard), yet makes no commit and the files do not change.
 */
async function expectIdleSiteWritesNothing(
  options: { config?: Record<string, unknown>; beforeCounting?: () => Promise<unknown> } = {},
): Promise<void> {
  const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630, 2: METER_MODELS.sdm630 } });
  onTestFinished(() => sim.close());
  for (const unit of [1, 2]) await sim.set(unit, { energyKWh: 100 * unit, currentA: [0, 0, 0], powerW: 0 });
  const tcp = { type: 'tcp', host: '127.0.0.1', port: sim.port } as const;
  const stations = STATIONS.map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] }));
  const t: TestDaemon = await startTestDaemon({
    sites: [{ id: 's1', stations, meters: [meterConfig(1, tcp), meterConfig(2, tcp)] }],
    ...options.config,
  });
  onTestFinished(() => t.stop());

  const connected = await Promise.all(STATIONS.map((id) => t.connect(id)));
  for (const station of connected) {
    await station.boot();
    await station.statusNotification({ connectorId: 1, status: 'Available' });
  }
  const port = t.daemon.httpPort;
  await eventually(
    async () =>
      ((await meterHealth(port, 'm1'))?.readings ?? 0) > 3 && ((await meterHealth(port, 'm2'))?.readings ?? 0) > 3,
    10_000,
    'both meters polled',
  );
  await options.beforeCounting?.();

  const files = [DATABASE_FILE, `${DATABASE_FILE}-wal`].map((f) => path.join(t.temp.dataDir, f));
  const sizes = (): number[] => files.map((f) => statSync(f).size);
  // data_version changes when another connection commits: the daemon's commits, counted from outside.
  const version = (): number => t.db.pragma('data_version', { simple: true }) as number;
  // The setup's own writes (the meters' first flush, held bookkeeping, the links' acknowledgements) land within one
  // period: count from the end of a period without a commit. A daemon that writes on every tick never gets there.
  let last = { version: version(), at: performance.now() };
  await eventually(
    () => {
      const now = version();
      if (now !== last.version) last = { version: now, at: performance.now() };
      return performance.now() - last.at >= LONGEST_PERIOD_MS;
    },
    30_000,
    `${LONGEST_PERIOD_MS} ms without a commit after the setup`,
  );
  const before = { version: version(), sizes: sizes(), readings: (await meterHealth(port, 'm1'))!.readings };

  const heartbeats = setInterval(
    () => connected.forEach((s) => void s.heartbeat().catch(() => undefined)),
    HEARTBEAT_EVERY_MS,
  );
  onTestFinished(() => clearInterval(heartbeats));
  await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  clearInterval(heartbeats);

  // The site was busy all along: the meters were read again and again, the stations heard every heartbeat.
  expect((await meterHealth(port, 'm1'))!.readings).toBeGreaterThan(before.readings + MIN_READINGS);
  expect(version()).toBe(before.version);
  expect(sizes()).toEqual(before.sizes);
  // What the daemon shows stays live though it is not written: the stations' last-seen times move.
  const listed = (await (await fetch(`http://127.0.0.1:${port}/status.json`)).json()) as {
    stations: Array<{ stationId: string; lastSeen: string }>;
  };
  const cp1 = listed.stations.find((s) => s.stationId === 'CP001')!;
  expect(Date.now() - Date.parse(cp1.lastSeen)).toBeLessThan(2000);
}

describe('an idle site writes nothing (docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear)', () => {
  it('five heartbeating stations and two polled meters whose readings do not change make no commit for twice the longest timer period', async () => {
    await expectIdleSiteWritesNothing();
  });

  it('nor with each station linked to a CSMS that hears every heartbeat (docs/design/uplink.md#uplink-what-the-csms-sees)', async () => {
    const csms = await TestCsms.startForTest();
    await expectIdleSiteWritesNothing({
      config: { upstream: { timeoutMs: 2000, csms: { url: csms.url, securityProfile: 0 } } },
      // Every link accepted and caught up (its statuses sent) before the count: then it only forwards, live.
      beforeCounting: () =>
        eventually(() => STATIONS.every((id) => csms.of('StatusNotification', id).length > 0), 30_000, 'links'),
    });
    // Half the heartbeats the window holds, for a loaded machine.
    const sentEach = WINDOW_MS / HEARTBEAT_EVERY_MS;
    expect(STATIONS.every((id) => csms.of('Heartbeat', id).length >= sentEach / 2)).toBe(true);
  });
});
