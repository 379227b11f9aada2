import { describe, expect, it } from 'vitest';
import { detect, type DetectionConfig, type DetectorAction, type DetectorState } from '../../src/modbus/index.js';

const detection: DetectionConfig = {
  startCurrentA: 1,
  startDelayS: 10,
  stopCurrentA: 0.5,
  stopDelayS: 60,
  offlineAfterS: 30,
};
const t0 = Date.parse('2026-01-01T10:00:00Z');

type Reading = [seconds: number, amps: number, wh?: number, powerW?: number];

/**
 * Feeds readings (second, amps, Wh) of a meter polled every pollIntervalMs through the detector; returns the actions
 * and the last state.
 */
function run(
  readings: Reading[],
  config = detection,
  initial: DetectorState = { phase: 'idle' },
  pollIntervalMs = 1000,
) {
  let state = initial;
  const actions: DetectorAction[] = [];
  let nextTransaction = 1;
  for (const [s, amps, wh = 1000, powerW] of readings) {
    const step = detect(
      state,
      { at: new Date(t0 + s * 1000), energyWh: wh, currentA: [amps, 0, 0], ...(powerW !== undefined && { powerW }) },
      config,
      pollIntervalMs,
    );
    state = step.state;
    if (step.action) {
      actions.push(step.action);
      if (step.action.type === 'start') state = { ...state, transactionId: nextTransaction++ };
    }
  }
  return { actions, state };
}

const at = (s: number) => new Date(t0 + s * 1000);

describe('session detector', () => {
  it('starts once the current stayed above the threshold for startDelayS, dated from the first such reading', () => {
    const { actions, state } = run([
      [0, 0, 1000],
      [1, 16, 1000],
      [6, 16, 1010],
      [11, 16, 1020],
    ]);
    expect(actions).toEqual([{ type: 'start', startedAt: at(1), meterStartWh: 1000 }]);
    expect(state).toEqual({ phase: 'charging', transactionId: 1 });
  });

  it('does not start on a spike shorter than startDelayS', () => {
    expect(
      run([
        [0, 16],
        [5, 16],
        [9, 0.2],
        [12, 16],
        [20, 16],
      ]).actions,
    ).toEqual([]);
  });

  // Readings are timed when the answer arrives: the first drawing one came in 12 ms after its poll, the one polled
  // startDelayS later after 4 ms, so they lie 8 ms less than startDelayS apart.
  const polledEverySecond = (lastAnswerS: number): Reading[] => [
    [0, 0, 1000],
    [1.012, 16, 1000],
    ...Array.from({ length: 9 }, (_, i): Reading => [2.004 + i, 16]),
    [lastAnswerS, 16, 1020],
  ];

  it('confirms a start on the reading polled startDelayS after the first, though its answer came a few ms short of it', () => {
    const { actions } = run(polledEverySecond(11.004));
    expect(actions).toEqual([{ type: 'start', startedAt: at(1.012), meterStartWh: 1000 }]);
  });

  it('does not confirm a start on a reading clearly short of startDelayS (more than a quarter poll), but on the next one', () => {
    const { actions, state } = run(polledEverySecond(10.7));
    expect(actions).toEqual([]);
    expect(state).toEqual({ phase: 'starting', since: at(1.012), candidateEnergyWh: 1000 });
    expect(run([...polledEverySecond(10.7), [11.7, 16, 1021]]).actions).toEqual([
      { type: 'start', startedAt: at(1.012), meterStartWh: 1000 },
    ]);
  });

  it('scales the slack with the poll interval: half a second short confirms at 4 s polls, not at 1 s polls', () => {
    const readings: Reading[] = [
      [0, 16],
      [4, 16],
      [9.5, 16],
    ];
    expect(run(readings, detection, { phase: 'idle' }, 4000).actions.map((a) => a.type)).toEqual(['start']);
    expect(run(readings, detection, { phase: 'idle' }, 1000).actions).toEqual([]);
  });

  it('waits out stopDelayS with the same slack: a few ms short confirms, clearly short does not', () => {
    const charging: Reading[] = [
      [0, 16, 1000],
      [10, 16, 1030],
      [100.01, 0, 5000],
    ];
    expect(run([...charging, [159.995, 0, 5001]]).actions).toEqual([
      { type: 'start', startedAt: at(0), meterStartWh: 1000 },
      { type: 'stop', transactionId: 1, stoppedAt: at(100.01), meterStopWh: 5001 },
    ]);
    const { actions, state } = run([...charging, [159.5, 0, 5001]]);
    expect(actions.map((a) => a.type)).toEqual(['start']);
    expect(state).toEqual({ phase: 'stopping', since: at(100.01), transactionId: 1 });
  });

  it('stops once the current stayed below the threshold for stopDelayS, with the energy of the confirming reading', () => {
    const { actions, state } = run([
      [0, 16, 1000],
      [10, 16, 1030],
      [100, 0.1, 5000],
      [130, 0, 5001],
      [160, 0, 5002],
    ]);
    expect(actions).toEqual([
      { type: 'start', startedAt: at(0), meterStartWh: 1000 },
      { type: 'stop', transactionId: 1, stoppedAt: at(100), meterStopWh: 5002 },
    ]);
    expect(state).toEqual({ phase: 'idle' });
  });

  it('lets a pause shorter than stopDelayS pass without splitting the session', () => {
    const { actions, state } = run([
      [0, 16],
      [10, 16],
      [100, 0],
      [140, 0],
      [159, 0.4],
      [159.5, 16],
      [200, 0],
      [230, 0],
    ]);
    expect(actions.map((a) => a.type)).toEqual(['start']);
    expect(state).toEqual({ phase: 'stopping', since: at(200), transactionId: 1 });
  });

  it('holds between the thresholds: neither starts from idle nor stops a session', () => {
    expect(
      run([
        [0, 0.7],
        [100, 0.7],
      ]).actions,
    ).toEqual([]);
    expect(
      run([
        [0, 16],
        [10, 16],
        [20, 0.7],
        [200, 0.7],
      ]).actions.map((a) => a.type),
    ).toEqual(['start']);
  });

  it('counts missing readings (an offline meter) as neither drawing nor quiet', () => {
    // Charging, then nothing for an hour, then current again: still the same session.
    const { actions, state } = run([
      [0, 16],
      [10, 16],
      [3610, 16],
    ]);
    expect(actions.map((a) => a.type)).toEqual(['start']);
    expect(state.phase).toBe('charging');
  });

  it('acts on the first reading with delays shorter than a poll', () => {
    const { actions } = run(
      [
        [0, 16, 1000],
        [1, 0, 1001],
      ],
      { ...detection, startDelayS: 0.01, stopDelayS: 0.01 },
    );
    expect(actions).toEqual([
      { type: 'start', startedAt: at(0), meterStartWh: 1000 },
      { type: 'stop', transactionId: 1, stoppedAt: at(1), meterStopWh: 1001 },
    ]);
  });

  it('also starts on power when startPowerW is set, and then stops only when power is low too', () => {
    const config = { ...detection, startPowerW: 500, stopPowerW: 100 };
    const { actions } = run(
      [
        [0, 0.2, 1000, 900],
        [10, 0.2, 1002, 900],
        [20, 0.2, 1003, 300],
        [100, 0, 1004, 50],
        [160, 0, 1005, 50],
      ],
      config,
    );
    expect(actions).toEqual([
      { type: 'start', startedAt: at(0), meterStartWh: 1000 },
      { type: 'stop', transactionId: 1, stoppedAt: at(100), meterStopWh: 1005 },
    ]);
  });

  it('continues a session recovered from storage', () => {
    const { actions } = run(
      [
        [0, 0, 2000],
        [60, 0, 2000],
      ],
      detection,
      { phase: 'stopping', since: at(-30), transactionId: 7 },
    );
    expect(actions).toEqual([{ type: 'stop', transactionId: 7, stoppedAt: at(-30), meterStopWh: 2000 }]);
  });
});
