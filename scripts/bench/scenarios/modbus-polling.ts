import { benchSite } from '../chargegate.js';
import { Fleet } from '../fleet.js';
import { stationIds } from '../identities.js';
import { nowMs, percentile, processStats, sleep, watchProcess } from '../measure.js';
import { firstStartCommits } from '../outbox-view.js';
import { eventually } from '../../../test/support/eventually.js';
import type { Scenario } from '../scenario.js';
import type { MetersApi } from '../workers/meters.js';
import type { ModbusPollerApi } from '../workers/modbus-poller.js';

/**
 * 7. Modbus: chargegate polls SDM630 meters over TCP. CPU share of one core while every meter idles, then every
 * meter starts drawing 16 A (spread over one poll interval): time until its StartTransaction is committed.
 * Baseline (no target): bare modbus-serial clients making the same requests at the same interval.
 */
export const modbusPolling: Scenario = {
  id: 7,
  title: 'Modbus TCP meters: poller CPU and session start detection',
  async run(ctx) {
    const s = ctx.settings.modbus;
    const detection = { startCurrentA: 1, startDelayS: s.startDelayS, stopCurrentA: 0.5, stopDelayS: 60 };
    ctx.describe({
      ...s,
      model: 'sdm630',
      detection,
      settleS: settleMs(s.pollIntervalMs) / 1000,
      idleStations: IDLE_STATIONS,
      heartbeatMs: HEARTBEAT_MS,
    });
    const simulators = await ctx.startWorker<MetersApi>('meters');

    const bare = await ctx.side('baseline (bare modbus-serial poller)', async () => {
      const { ports } = await simulators.call('start', { count: s.meters });
      const poller = await ctx.startWorker<ModbusPollerApi>('modbus-poller');
      await poller.call('start', { ports, pollIntervalMs: s.pollIntervalMs });
      await sleep(settleMs(s.pollIntervalMs));
      const { cpuPercent } = await watchProcess(poller.pid, () => sleep(s.measureS * 1000));
      await poller.call('stop', undefined);
      await poller.stop();
      await simulators.call('close', undefined);
      return { cpuPercent };
    });

    const chargegate = await ctx.side('chargegate', async () => {
      const { ports } = await simulators.call('start', { count: s.meters });
      const meters = ports.map((meterPort, i) => ({
        id: `meter-${i + 1}`,
        chargePointId: `MB-${i + 1}`,
        connectorId: 1,
        model: 'sdm630',
        connection: { type: 'tcp', host: '127.0.0.1', port: meterPort, unitId: 1 },
        pollIntervalMs: s.pollIntervalMs,
        detection,
      }));
      return ctx.withChargegate({ sites: [benchSite({ meters, stations: IDLE_STATIONS })] }, async (daemon) => {
        const fleet = await Fleet.connect(ctx, {
          url: daemon.ocppUrl,
          identities: stationIds(IDLE_STATIONS),
          generators: 1,
          concurrency: IDLE_STATIONS,
        });
        await sleep(settleMs(s.pollIntervalMs));
        const before = await simulators.call('requests', undefined);
        const writtenBefore = processStats(daemon.pid).writtenBytes;
        const { cpuPercent, result: heartbeats } = await watchProcess(
          daemon.pid,
          async () =>
            (
              await fleet.all((g) => g.call('heartbeats', { intervalMs: HEARTBEAT_MS, durationMs: s.measureS * 1000 }))
            )[0]!,
        );
        const idleMBPerDay = ((processStats(daemon.pid).writtenBytes - writtenBefore) / s.measureS) * (86_400 / 1e6);
        await fleet.stop();
        const after = await simulators.call('requests', undefined);
        const requestsPerS = after.reduce((n, r, i) => n + r - (before[i] ?? 0), 0) / s.measureS;

        const setAt = await simulators.call('startCharging', { atMs: nowMs() + 100, spreadMs: s.pollIntervalMs });
        let detectedAt = new Map<string, number>();
        await eventually(
          () => {
            daemon.assertAlive();
            detectedAt = firstStartCommits(daemon.site.dataDir);
            return meters.every((m) => detectedAt.has(m.id));
          },
          (s.startDelayS + 20) * 1000,
          () => `StartTransaction for ${detectedAt.size} of ${meters.length} meters`,
          100,
        );
        const latenciesS = meters.map((m, i) => (detectedAt.get(m.id)! - setAt[i]!) / 1000);
        return {
          cpuPercent,
          requestsPerS,
          idleMBPerDay,
          heartbeats,
          p50S: percentile(latenciesS, 50),
          maxS: Math.max(...latenciesS),
        };
      });
    });

    const bound = s.startDelayS + s.pollIntervalMs / 1000;
    ctx.figure({
      name: `CPU, ${s.meters} meters polled every ${s.pollIntervalMs} ms`,
      unit: '% of a core',
      chargegate: chargegate?.cpuPercent ?? null,
      baseline: bare?.cpuPercent ?? null,
      target: [{ on: 'chargegate', op: '<=', value: 10 }],
    });
    ctx.figure({
      name: 'Modbus requests answered',
      unit: 'requests/s',
      chargegate: chargegate?.requestsPerS ?? null,
      note: 'counted by the simulators: shows the meters really were polled at the configured interval',
    });
    ctx.figure({
      name: 'written to disk at idle',
      unit: 'MB/day',
      chargegate: chargegate?.idleMBPerDay ?? null,
      target: [{ on: 'chargegate', op: '<=', value: 1 }],
      note: `/proc/PID/io write_bytes of the daemon over the idle window, per day: ${s.meters} meters with unchanging readings and ${IDLE_STATIONS} stations sending a Heartbeat every ${HEARTBEAT_MS / 1000} s (${chargegate?.heartbeats.sent ?? 0} answered${chargegate?.heartbeats.firstError ? `; ${chargegate.heartbeats.firstError}` : ''})`,
    });
    ctx.figure({ name: 'start detection, p50', unit: 's', chargegate: chargegate?.p50S ?? null });
    ctx.figure({
      name: 'start detection, slowest meter',
      unit: 's',
      chargegate: chargegate?.maxS ?? null,
      target: [{ on: 'chargegate', op: '<=', value: bound }],
      note: `from the meter drawing 16 A to chargegate committing its StartTransaction (ms clock of the event row); target = startDelayS ${s.startDelayS} s + one poll`,
    });
  },
};

/** Stations connected during the idle window, each sending a Heartbeat every HEARTBEAT_MS (a real one: 300 s). */
const IDLE_STATIONS = 5;
const HEARTBEAT_MS = 1000;

/** Time for every meter to have been polled a couple of times (connections up, first readings in). */
function settleMs(pollIntervalMs: number): number {
  return 2 * pollIntervalMs + 500;
}
