import { describe, expect, it, onTestFinished } from 'vitest';
import { METER_MODELS } from '../../src/modbus/index.js';
import { daemonForTest } from '../support/daemon.js';
import { MeterSimulator } from '../support/meter-simulator.js';
import { eventually, FAST_DETECTION, meterConfig, statusTrail, waitForStatus } from './harness.js';

/**
 * Contract section 7, "Modbus lines": offline offlineAfterS after the last good reading, within 1 s, whatever the
 * back-off.
 */
describe('two meters on one line that goes away', () => {
  it('are each declared offline offlineAfterS after their last good reading, within 1 s', async () => {
    const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630, 2: METER_MODELS.sdm630 } });
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
    const meters = [1, 2].map((unit) => {
      const meter = meterConfig(unit, { type: 'tcp', host: '127.0.0.1', port: sim.port }, { detection });
      return { ...meter, connection: { ...(meter.connection as object), ...line } };
    });
    const t = await daemonForTest({ sites: [{ id: 's1', stations: [], meters, webhooks: [] }] });
    for (const id of ['m1', 'm2']) await waitForStatus(t.db, id, 'Available');

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
      () => {
        for (const id of ['m1', 'm2'])
          if (faultedAt[id] === undefined && statusTrail(t.db, id).includes('Faulted/PowerMeterFailure'))
            faultedAt[id] = Date.now();
        return Object.keys(faultedAt).length === 2;
      },
      15_000,
      'both meters Faulted',
    );
    for (const id of ['m1', 'm2']) {
      const late = (faultedAt[id]! - (await lastGood(id))) / 1000;
      expect({ id, withinBound: late <= detection.offlineAfterS + 1 }).toEqual({ id, withinBound: true });
    }
  });
});
