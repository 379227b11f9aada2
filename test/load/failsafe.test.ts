import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FAILSAFE_HORIZON_MS,
  CONNECTED_GRACE_MS,
  FAILSAFE_MAX_PERIODS,
  failsafeDue,
  failsafeLimit,
  failsafeOf,
  StationFailsafes,
  type FailsafeConnector,
} from '../../src/load/failsafe.js';
import {
  compositeOf,
  limitAt,
  VOLTS_PER_PHASE,
  type ChargingLimits,
  type CsmsSchedules,
  type LimitOutcome,
  type LimitProfile,
  type PlacedProfile,
  type TransactionLimit,
} from '../../src/load/index.js';

/*
 * docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles: the fail-safe a station holds is never above what the operator's CSMS
 * allows a connector without a transaction profile, nor above the circuit's fail-safe. The CSMS's side is the real
 * composite of its kept profiles (compositeOf), as the uplink keeps them.
 */

/** A Monday, 00:00 UTC. */
const MONDAY = Date.UTC(2026, 0, 5);
const MINUTE_MS = 60_000;
const TWO_CONNECTORS: FailsafeConnector[] = [
  { connectorId: 1, phases: 3, failsafeA: 16 },
  { connectorId: 2, phases: 3, failsafeA: 16 },
];

/** The CSMS's side as the uplink keeps it: the profiles of one station, stacked. */
function kept(...placed: PlacedProfile[]): CsmsSchedules {
  return { scheduleOf: (_, place, window) => compositeOf(placed, place, window), onChange: () => () => undefined };
}

function profile(
  purpose: LimitProfile['purpose'],
  periods: Array<[startS: number, limit: number]>,
  fields: Partial<LimitProfile> = {},
  unit: 'A' | 'W' = 'A',
): LimitProfile {
  return {
    id: 1,
    stackLevel: 0,
    purpose,
    kind: 'absolute',
    schedule: { startMs: MONDAY, unit, periods: periods.map(([startS, limit]) => ({ startS, limit })) },
    ...fields,
  };
}

const onStation = (p: LimitProfile, connectorId = 0): PlacedProfile => ({
  connectorId,
  profile: p,
  receivedAtMs: MONDAY,
});

/**
 * What the CSMS allows at t, worked out apart from the code under test: for each connector, the lowest its profiles
 * give a transaction that started at any of the instants that matter (now, or so that t falls at a relative
 * schedule's period or just past its duration); the station maximum split between the connectors.
 */
function csmsAllows(placed: readonly PlacedProfile[], connectors: readonly FailsafeConnector[], t: number): number {
  const window = { fromMs: t, toMs: t + 1 };
  const offsetsS = placed
    .filter((p) => p.profile.kind === 'relative')
    .flatMap((p) => [
      ...p.profile.schedule.periods.map((period) => period.startS),
      ...(p.profile.schedule.durationS === undefined ? [] : [p.profile.schedule.durationS]),
    ]);
  const starts = [t, ...offsetsS.map((offsetS) => t - offsetS * 1000)];
  const own = connectors.flatMap(({ connectorId, phases }) =>
    starts.map(
      (startedAtMs) =>
        compositeOf(placed, { connectorId, phases, transaction: { id: -1, startedAtMs } }, window).steps[0]!.limitA,
    ),
  );
  const maximum = compositeOf(placed, { connectorId: 0, phases: 3 }, window).steps[0]!.limitA;
  return Math.min(...own.map((a) => a ?? Infinity), (maximum ?? Infinity) / connectors.length);
}

describe('the fail-safe under a CSMS (docs/design/uplink.md#uplink-what-the-csms-sees)', () => {
  it('without a CSMS, or one that allows more, the circuit fail-safe alone: one period, the lowest of the connectors', () => {
    const connectors = [TWO_CONNECTORS[0]!, { ...TWO_CONNECTORS[1]!, failsafeA: 8 }];
    for (const csms of [undefined, kept(onStation(profile('transactionDefault', [[0, 32]])))]) {
      const failsafe = failsafeOf('CP', connectors, csms, MONDAY + 123);
      expect(failsafeLimit(failsafe)).toEqual({ currentA: 8 });
      expect(
        failsafeDue(
          failsafe,
          failsafeOf('CP', connectors, csms, MONDAY + 10 * FAILSAFE_HORIZON_MS),
          MONDAY + 10 * FAILSAFE_HORIZON_MS,
        ),
      ).toBe(false);
    }
  });

  it('follows a daily schedule exactly for its first periods, then holds its lowest; the maximum is split between the connectors', () => {
    // Every half hour another limit: 48 periods a day, 8 A at the lowest.
    const periods = Array.from({ length: 48 }, (_, i): [number, number] => [i * 1800, 8 + (i % 7)]);
    const csms = kept(
      onStation(profile('transactionDefault', periods, { kind: 'recurring', recurrency: 'daily' })),
      onStation(profile('stationMaximum', [[0, 13 * 3 * VOLTS_PER_PHASE * 2]], { id: 2 }, 'W')),
    );
    const nowMs = MONDAY + 15 * MINUTE_MS + 400;
    const failsafe = failsafeOf('CP', TWO_CONNECTORS, csms, nowMs);
    const { currentA, changes } = failsafeLimit(failsafe);
    expect(1 + changes!.steps.length).toBe(FAILSAFE_MAX_PERIODS);
    expect(changes!.from).toEqual(new Date(MONDAY + 15 * MINUTE_MS));
    expect(currentA).toBe(8);
    // 13 A for the station's two connectors: 12 and 13 A from the schedule become 12 and 13... capped at 13.
    expect(changes!.steps.slice(0, 3)).toEqual([
      { afterS: 15 * 60, currentA: 9 },
      { afterS: 45 * 60, currentA: 10 },
      { afterS: 75 * 60, currentA: 11 },
    ]);
    expect(Math.max(...changes!.steps.map((s) => s.currentA))).toBe(13);
    expect(changes!.steps.at(-1)!.currentA).toBe(8);
    expect(failsafe.exactUntilMs).toBe(changes!.from.getTime() + changes!.steps.at(-1)!.afterS * 1000);
  });

  it('never allows more than the CSMS or the circuit at any instant: within its horizon as decided, and later as renewed at every step', async () => {
    const limit = fc.integer({ min: 0, max: 320 }).map((tenths) => tenths / 10);
    const periods = fc
      .uniqueArray(fc.integer({ min: 1, max: 2 * 86_400 }), { maxLength: 40 })
      .chain((starts) =>
        fc
          .tuple(limit, fc.array(limit, { minLength: starts.length, maxLength: starts.length }))
          .map(([first, rest]): Array<[number, number]> => [
            [0, first],
            ...[...starts].sort((a, b) => a - b).map((startS, i): [number, number] => [startS, rest[i]!]),
          ]),
      );
    const placed = fc.record({
      purpose: fc.constantFrom('transactionDefault' as const, 'stationMaximum' as const),
      connectorId: fc.constantFrom(0, 1, 2),
      stackLevel: fc.integer({ min: 0, max: 3 }),
      kind: fc.constantFrom('absolute' as const, 'recurring' as const, 'relative' as const),
      unit: fc.constantFrom('A' as const, 'W' as const),
      startS: fc.integer({ min: -86_400, max: 86_400 }),
      durationS: fc.option(fc.integer({ min: 1, max: 2 * 86_400 }), { nil: undefined }),
      validFromS: fc.option(fc.integer({ min: -86_400, max: 2 * 86_400 }), { nil: undefined }),
      validForS: fc.option(fc.integer({ min: 1, max: 2 * 86_400 }), { nil: undefined }),
      periods,
    });
    const HOUR_MS = 60 * MINUTE_MS;
    await fc.assert(
      fc.asyncProperty(
        fc.array(placed, { maxLength: 4 }),
        fc.integer({ min: 0, max: 320 }),
        fc.integer({ min: 0, max: 86_400_000 }),
        fc.array(fc.integer({ min: 0, max: HOUR_MS - 1 }), { minLength: 1, maxLength: 5 }),
        async (profiles, failsafeTenths, nowOffsetMs, withinHourMs) => {
          const placedProfiles = profiles.map((p, i): PlacedProfile => {
            const inUnit = p.periods.map(([startS, l]): [number, number] => [
              startS,
              p.unit === 'W' ? l * 3 * VOLTS_PER_PHASE : l,
            ]);
            return {
              connectorId: p.purpose === 'stationMaximum' ? 0 : p.connectorId,
              receivedAtMs: MONDAY,
              profile: profile(p.purpose, inUnit, {
                id: i + 1,
                stackLevel: p.stackLevel,
                kind: p.kind,
                ...(p.kind === 'recurring' && { recurrency: 'daily' as const }),
                ...(p.validFromS !== undefined && { validFromMs: MONDAY + p.validFromS * 1000 }),
                ...(p.validForS !== undefined && {
                  validToMs: MONDAY + ((p.validFromS ?? 0) + p.validForS) * 1000,
                }),
                schedule: {
                  startMs: MONDAY + p.startS * 1000,
                  ...(p.durationS !== undefined && { durationS: p.durationS }),
                  unit: p.unit,
                  periods: inUnit.map(([startS, l]) => ({ startS, limit: l })),
                },
              }),
            };
          });
          const csms = kept(...placedProfiles);
          const failsafeA = failsafeTenths / 10;
          const connectors = TWO_CONNECTORS.map((c) => ({ ...c, failsafeA }));
          const nowMs = MONDAY + nowOffsetMs;
          const ok = (held: number | undefined, t: number) =>
            held !== undefined && held <= failsafeA && held <= csmsAllows(placedProfiles, connectors, t) + 1e-9;
          const decided = failsafeOf('CP', connectors, csms, nowMs);
          for (let t = nowMs; t < nowMs + FAILSAFE_HORIZON_MS; t += 37 * MINUTE_MS + 1234)
            if (!ok(limitAt(decided.held, t), t)) return false;
          // Two days of steps, an hour apart (they run every second): the station always holds a safe one.
          const { limits } = stationAnswering();
          const { failsafes } = failsafesFor(limits, csms, connectors);
          failsafes.booted('CP', nowMs);
          for (let stepMs = nowMs; stepMs < nowMs + 2 * FAILSAFE_HORIZON_MS; stepMs += HOUR_MS) {
            failsafes.renew(stepMs);
            await settle();
            for (const offsetMs of withinHourMs) {
              const t = stepMs + offsetMs;
              if (!ok(failsafes.over('CP', { fromMs: t, toMs: t + 1 })?.steps[0]?.limitA, t)) return false;
            }
          }
          return true;
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a relative default counts from a start not known yet: its lowest period throughout', () => {
    const csms = kept(
      onStation(
        profile(
          'transactionDefault',
          [
            [0, 20],
            [3600, 7],
          ],
          { kind: 'relative' },
        ),
      ),
    );
    expect(failsafeLimit(failsafeOf('CP', TWO_CONNECTORS, csms, MONDAY))).toEqual({ currentA: 7 });
  });

  it('a relative default with a duration hides a lower one only for a while: the lower holds for a transaction started earlier', () => {
    const firstHour = profile('transactionDefault', [[0, 16]], {
      stackLevel: 2,
      kind: 'relative',
      schedule: { unit: 'A', durationS: 3600, periods: [{ startS: 0, limit: 16 }] },
    });
    const csms = kept(onStation(firstHour), onStation(profile('transactionDefault', [[0, 6]], { id: 2 })));
    expect(failsafeLimit(failsafeOf('CP', TWO_CONNECTORS, csms, MONDAY))).toEqual({ currentA: 6 });
  });

  it('flat, for a station that refused one that changes: the lowest of it throughout', () => {
    const csms = kept(
      onStation(
        profile('transactionDefault', [
          [0, 10],
          [120, 4],
          [240, 12],
        ]),
      ),
    );
    expect(failsafeLimit(failsafeOf('CP', TWO_CONNECTORS, csms, MONDAY))).toEqual({
      currentA: 10,
      changes: {
        from: new Date(MONDAY),
        steps: [
          { afterS: 120, currentA: 4 },
          { afterS: 240, currentA: 12 },
          { afterS: 86_400, currentA: 4 },
        ],
      },
    });
    expect(failsafeLimit(failsafeOf('CP', TWO_CONNECTORS, csms, MONDAY, true))).toEqual({ currentA: 4 });
  });

  it('due again when what it should be changes while the held one is exact, or halfway through its exact part; not for the clock moving on alone', () => {
    const periods = Array.from({ length: 48 }, (_, i): [number, number] => [i * 1800, 8 + (i % 7)]);
    const daily = onStation(profile('transactionDefault', periods, { kind: 'recurring', recurrency: 'daily' }));
    const held = failsafeOf('CP', TWO_CONNECTORS, kept(daily), MONDAY);
    const at = (ms: number) => [failsafeOf('CP', TWO_CONNECTORS, kept(daily), MONDAY + ms), MONDAY + ms] as const;
    expect(failsafeDue(held, ...at(10 * MINUTE_MS + 300))).toBe(false);
    const halfway = (held.exactUntilMs - MONDAY) / 2;
    expect(failsafeDue(held, ...at(halfway - 1000))).toBe(false);
    expect(failsafeDue(held, ...at(halfway))).toBe(true);
    const lower = kept(daily, onStation(profile('stationMaximum', [[0, 6 * 3 * VOLTS_PER_PHASE * 2]], { id: 2 }, 'W')));
    expect(failsafeDue(held, failsafeOf('CP', TWO_CONNECTORS, lower, MONDAY + MINUTE_MS), MONDAY + MINUTE_MS)).toBe(
      true,
    );
  });
});

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A CSMS default of 10 A from midnight and 4 A from noon, every day: a fail-safe under it always changes. */
const DAILY = onStation(
  profile(
    'transactionDefault',
    [
      [0, 10],
      [43_200, 4],
    ],
    { kind: 'recurring', recurrency: 'daily' },
  ),
);

/** One station's fail-safe kept by StationFailsafes, what it counts as refused recorded. */
function failsafesFor(limits: ChargingLimits, csms: CsmsSchedules, connectors = TWO_CONNECTORS) {
  const refused: LimitOutcome[] = [];
  const schedulesRefused = new Set<string>();
  const failsafes = new StationFailsafes({
    limits,
    csms,
    schedulesRefused,
    connectorsOf: () => connectors,
    refused: (_, outcome) => refused.push(outcome),
    failed: (_, err) => {
      throw err;
    },
    accepted: () => undefined,
  });
  return { failsafes, refused, schedulesRefused };
}

/** A station's answers to its fail-safe, in order; every call recorded. */
function stationAnswering(...outcomes: LimitOutcome[]): {
  limits: ChargingLimits;
  sent: Array<{ currentA: number; changes?: TransactionLimit['changes'] }>;
} {
  const sent: Array<{ currentA: number; changes?: TransactionLimit['changes'] }> = [];
  return {
    sent,
    limits: {
      setFailsafe: (_, currentA, changes) => {
        sent.push({ currentA, ...(changes && { changes }) });
        return Promise.resolve(outcomes.shift() ?? 'accepted');
      },
      setTransactionLimit: () => Promise.resolve('accepted'),
      requestDrawReport: () => Promise.resolve('accepted'),
    },
  };
}

describe('each station kept on its fail-safe (StationFailsafes)', () => {
  it('a station that refuses a schedule gets its lowest as one period, and is not counted as refusing the fail-safe', async () => {
    const { limits, sent } = stationAnswering('rejected', 'accepted');
    const csms = kept(
      onStation(
        profile('transactionDefault', [
          [0, 10],
          [120, 4],
        ]),
      ),
    );
    const { failsafes, refused, schedulesRefused } = failsafesFor(limits, csms);
    failsafes.booted('CP', MONDAY);
    await settle();
    expect(sent.map((s) => [s.currentA, s.changes?.steps.length ?? 0])).toEqual([
      [10, 1],
      [4, 0],
    ]);
    expect([refused, [...schedulesRefused]]).toEqual([[], ['CP']]);
    failsafes.renew(MONDAY + 10 * FAILSAFE_HORIZON_MS);
    await settle();
    expect(sent).toHaveLength(2);
  });

  it('renewed halfway through its exact part; offline, nothing until it connects again; a refused flat one counts the station out until it boots', async () => {
    const { limits, sent } = stationAnswering('accepted', 'accepted', 'offline');
    const { failsafes, refused } = failsafesFor(limits, kept(DAILY));
    const renewAt = async (ms: number) => {
      failsafes.renew(MONDAY + ms);
      await settle();
      return sent.length;
    };
    failsafes.booted('CP', MONDAY);
    await settle();
    expect(await renewAt(MINUTE_MS)).toBe(1);
    expect(await renewAt(FAILSAFE_HORIZON_MS / 2)).toBe(2);
    expect(await renewAt(FAILSAFE_HORIZON_MS / 2 + MINUTE_MS)).toBe(2);
    expect(await renewAt(FAILSAFE_HORIZON_MS)).toBe(3);
    // Offline: its connection closed, and so it is told.
    failsafes.disconnected('CP');
    expect([await renewAt(2 * FAILSAFE_HORIZON_MS), refused]).toEqual([3, []]);
    failsafes.connected('CP', MONDAY + 2 * FAILSAFE_HORIZON_MS);
    expect(await renewAt(2 * FAILSAFE_HORIZON_MS + CONNECTED_GRACE_MS)).toBe(4);

    const twoPeriods = kept(
      onStation(
        profile('transactionDefault', [
          [0, 10],
          [120, 4],
        ]),
      ),
    );
    const flat = stationAnswering('rejected', 'rejected', 'accepted');
    const second = failsafesFor(flat.limits, twoPeriods);
    second.failsafes.booted('CP', MONDAY);
    await settle();
    expect(second.refused).toEqual(['rejected']);
    second.failsafes.renew(MONDAY + FAILSAFE_HORIZON_MS);
    await settle();
    expect(flat.sent).toHaveLength(2);
    expect(second.failsafes.over('CP', { fromMs: MONDAY, toMs: MONDAY + 1000 })?.steps).toEqual([
      { atMs: MONDAY, limitA: 4 },
    ]);
    second.failsafes.booted('CP', MONDAY + 1000);
    await settle();
    expect(flat.sent.map((s) => s.changes?.steps.length ?? 0)).toEqual([1, 0, 1]);
  });

  it('a station that connects without booting gets it after CONNECTED_GRACE_MS, unless it boots first; gone, it gets nothing', async () => {
    const { limits, sent } = stationAnswering();
    const { failsafes } = failsafesFor(limits, kept());
    failsafes.connected('CP', MONDAY);
    failsafes.renew(MONDAY + CONNECTED_GRACE_MS - 1);
    await settle();
    expect(sent).toEqual([]);
    failsafes.renew(MONDAY + CONNECTED_GRACE_MS);
    await settle();
    expect(sent).toEqual([{ currentA: 16 }]);

    failsafes.disconnected('CP');
    failsafes.renew(MONDAY + FAILSAFE_HORIZON_MS);
    failsafes.connected('CP', MONDAY + FAILSAFE_HORIZON_MS);
    failsafes.booted('CP', MONDAY + FAILSAFE_HORIZON_MS + 10);
    await settle();
    failsafes.renew(MONDAY + FAILSAFE_HORIZON_MS + CONNECTED_GRACE_MS);
    await settle();
    expect(sent).toHaveLength(2);
  });

  it('a station that reconnects while a send is on its way (its old socket closed, the answer offline) keeps its place', async () => {
    const answers: Array<(outcome: LimitOutcome) => void> = [];
    const limits: ChargingLimits = {
      setFailsafe: () => new Promise((resolve) => answers.push(resolve)),
      setTransactionLimit: () => Promise.resolve('accepted'),
      requestDrawReport: () => Promise.resolve('accepted'),
    };
    const { failsafes } = failsafesFor(limits, kept());
    failsafes.booted('CP', MONDAY);
    failsafes.connected('CP', MONDAY + 1000);
    answers[0]!('offline');
    await settle();
    failsafes.renew(MONDAY + 1000 + CONNECTED_GRACE_MS);
    expect(answers).toHaveLength(2);
  });

  it('a station that refused the fail-safe is left alone over reconnects until it boots', async () => {
    const { limits, sent } = stationAnswering('rejected');
    const { failsafes, refused } = failsafesFor(limits, kept());
    failsafes.booted('CP', MONDAY);
    await settle();
    failsafes.disconnected('CP');
    failsafes.connected('CP', MONDAY + MINUTE_MS);
    failsafes.renew(MONDAY + MINUTE_MS + CONNECTED_GRACE_MS);
    await settle();
    expect([sent.length, refused]).toEqual([1, ['rejected']]);
    failsafes.booted('CP', MONDAY + 2 * MINUTE_MS);
    await settle();
    expect(sent).toHaveLength(2);
  });

  it('a wall clock set back neither stops the rechecks nor holds back a connected station', async () => {
    const { limits, sent } = stationAnswering();
    let csms = kept(DAILY);
    const schedules: CsmsSchedules = {
      scheduleOf: (...args) => csms.scheduleOf(...args),
      onChange: () => () => undefined,
    };
    const { failsafes } = failsafesFor(limits, schedules);
    const later = MONDAY + 3600_000;
    failsafes.booted('CP', later);
    failsafes.connected('OTHER', later);
    await settle();
    expect(sent).toHaveLength(1);
    // The clock goes back an hour, and the CSMS's maximum falls meanwhile (its change not told: a minute's recheck).
    csms = kept(DAILY, onStation(profile('stationMaximum', [[0, 2 * 3 * 3 * VOLTS_PER_PHASE]], { id: 2 }, 'W')));
    failsafes.renew(MONDAY + MINUTE_MS);
    await settle();
    expect(sent.map((s) => s.currentA)).toEqual([10, 3, 3]);
  });

  it('works out what it should be again only after a change, a minute on, or halfway: a step costs nothing in between; stopped, it sends nothing', async () => {
    const { limits, sent } = stationAnswering('accepted', 'accepted', 'rejected');
    const asked: string[] = [];
    const counting: CsmsSchedules = {
      scheduleOf: (stationId, place, window) => (
        asked.push(stationId),
        kept(DAILY).scheduleOf(stationId, place, window)
      ),
      onChange: () => () => undefined,
    };
    const { failsafes } = failsafesFor(limits, counting);
    failsafes.booted('CP', MONDAY);
    failsafes.booted('OTHER', MONDAY);
    await settle();
    const askedAfter = (renewAtMs: number) => {
      asked.length = 0;
      failsafes.renew(renewAtMs);
      return [...new Set(asked)];
    };
    for (let s = 1; s < 60; s += 1) expect(askedAfter(MONDAY + s * 1000)).toEqual([]);
    expect(askedAfter(MONDAY + MINUTE_MS)).toEqual(['CP', 'OTHER']);
    // A change to one station's CSMS profiles: that station's alone; the config's: every station's.
    failsafes.changed('OTHER');
    expect(askedAfter(MONDAY + MINUTE_MS + 1000)).toEqual(['OTHER']);
    failsafes.changed();
    expect(askedAfter(MONDAY + MINUTE_MS + 2000)).toEqual(['CP', 'OTHER']);
    expect(sent).toHaveLength(2);

    // What it should be changes (a lower maximum): the answer, a refusal of one that changes, comes after stop().
    const lower = kept(DAILY, onStation(profile('stationMaximum', [[0, 2 * 3 * 3 * VOLTS_PER_PHASE]], { id: 2 }, 'W')));
    const second = failsafesFor(limits, lower);
    second.failsafes.booted('CP', MONDAY);
    second.failsafes.stop();
    await settle();
    expect(sent).toHaveLength(3);
  });
});
