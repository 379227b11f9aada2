import { describe, expect, it, onTestFinished } from 'vitest';
import { METER_MODELS } from '../../src/modbus/index.js';
import { daemonForTest } from '../support/daemon.js';
import { MeterSimulator } from '../support/meter-simulator.js';
import { eventually, meterConfig, meterEvents, waitForEvent, waitForStatus } from './harness.js';

const CHARGING = { currentA: [16, 16, 16], powerW: 11_040 };

/**
 * Issue "Nothing acknowledged is ever lost": a Modbus session and the detector state that knows of it commit together.
 */
describe('a Modbus session start whose detector state cannot be written', () => {
  it('leaves no session behind, and the next reading after the fault starts exactly one', async () => {
    const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } });
    onTestFinished(() => sim.close());
    const t = await daemonForTest({
      sites: [
        {
          id: 's1',
          stations: [],
          meters: [meterConfig(1, { type: 'tcp', host: '127.0.0.1', port: sim.port })],
          webhooks: [],
        },
      ],
    });
    await sim.set(1, { energyKWh: 10, currentA: [0, 0, 0], powerW: 0 });
    await waitForStatus(t.db, 'm1', 'Available');

    // A real SQLite failure on the detector row, in the same commit as the session: every start attempt fails.
    // Only the write that records a session in the detector fails: the detector still gets to 'starting'.
    for (const [name, op] of [
      ['detector_refused', 'UPDATE'],
      ['detector_refused_insert', 'INSERT'],
    ]) {
      t.db.exec(
        `CREATE TRIGGER ${name} BEFORE ${op} ON meter_detectors WHEN NEW.transaction_id IS NOT NULL BEGIN SELECT RAISE(ABORT, 'injected: detector state refused'); END`,
      );
    }
    await sim.set(1, CHARGING);
    await eventually(
      () => t.logged('could not record the session change; retrying with the next reading').length >= 2,
      20_000,
      'two failed start attempts',
    );
    expect(t.db.prepare('SELECT COUNT(*) AS n FROM transactions').get()).toEqual({ n: 0 });
    expect(meterEvents(t.db, 'm1', 'StartTransaction')).toEqual([]);

    t.db.exec('DROP TRIGGER detector_refused');
    t.db.exec('DROP TRIGGER detector_refused_insert');
    await waitForEvent(t.db, 'm1', 'StartTransaction');
    // Readings keep coming: still one session.
    await eventually(
      () => t.db.prepare("SELECT phase FROM meter_detectors WHERE meter_id = 'm1'").pluck().get() === 'charging',
      10_000,
      'the detector in session',
    );
    expect(t.db.prepare('SELECT COUNT(*) AS n FROM transactions').get()).toEqual({ n: 1 });
    expect(meterEvents(t.db, 'm1', 'StartTransaction')).toHaveLength(1);
  });
});
