import { describe, expect, it, onTestFinished } from 'vitest';
import { METER_MODELS } from '../../src/modbus/index.js';
import { daemonForTest } from '../support/daemon.js';
import { MeterSimulator } from '../support/meter-simulator.js';
import {
  circuitMeterConfig,
  eventually,
  FAST_DETECTION,
  meterConfig,
  meterHealth,
  statusTrail,
  waitForStatus,
} from './harness.js';

/**
 * Contract section 7, "Modbus lines": offline offlineAfterS after the last good reading, within 1 s, whatever the
 * back-off.
 */
describe('meters on one line that goes away', () => {
  it('two session meters and a circuit meter are each declared offline offlineAfterS after their last good reading, within 1 s', async () => {
    const sim = await MeterSimulator.tcp({
      units: { 1: METER_MODELS.sdm630, 2: METER_MODELS.sdm630, 3: METER_MODELS.sdm630 },
    });
    let lineGone = false;
    const takeLineAway = async () => {
      if (lineGone) return;
      lineGone = true;
      await sim.close();
    };
    onTestFinished(takeLineAway);
    // A slow reconnect: with offline decided only when a poll fails, the first failed poll after the line goes
    // away comes one reconnect wait later, past offlineAfterS + 1 s.
    const line = { reconnectMinMs: 4000, reconnectMaxMs: 10_000 };
    const detection = { ...FAST_DETECTION, offlineAfterS: 2 };
    const tcp = { type: 'tcp', host: '127.0.0.1', port: sim.port } as const;
    const meters = [
      ...[1, 2].map((unit) => meterConfig(unit, tcp, { detection })),
      circuitMeterConfig('c3', 3, tcp, detection.offlineAfterS),
    ].map((meter) => ({ ...meter, connection: { ...(meter.connection as object), ...line } }));
    const t = await daemonForTest({ sites: [{ id: 's1', stations: [], meters, webhooks: [] }] });
    for (const id of ['m1', 'm2']) await waitForStatus(t.db, id, 'Available');
    await eventually(async () => (await meterHealth(t.daemon.httpPort, 'c3'))?.readings, 10_000, 'a reading of c3');

    // The time of each meter's last good reading, as the daemon reports it; then the line goes away.
    const lastGood = async (id: string) => {
      const body = (await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/health`)).json()) as {
        meters: { meters: Record<string, { lastGoodReadingAt?: string }> };
      };
      return Date.parse(body.meters.meters[id]!.lastGoodReadingAt!);
    };
    await takeLineAway();
    const faultedAt: Record<string, number> = {};
    await eventually(
      async () => {
        for (const id of ['m1', 'm2'])
          if (faultedAt[id] === undefined && statusTrail(t.db, id).includes('Faulted/PowerMeterFailure'))
            faultedAt[id] = Date.now();
        // A circuit meter reports no connector status: its health tells.
        if (faultedAt.c3 === undefined && (await meterHealth(t.daemon.httpPort, 'c3'))?.online === false)
          faultedAt.c3 = Date.now();
        return Object.keys(faultedAt).length === 3;
      },
      15_000,
      'all three meters offline',
    );
    for (const id of ['m1', 'm2', 'c3']) {
      const late = (faultedAt[id]! - (await lastGood(id))) / 1000;
      expect({ id, withinBound: late <= detection.offlineAfterS + 1 }).toEqual({ id, withinBound: true });
    }
  });
});
