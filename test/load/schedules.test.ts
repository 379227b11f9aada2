import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  capped,
  compositeOf,
  limitAt,
  lowerOf,
  periodsOf,
  sumOf,
  within,
  type ConnectorPlace,
  type LimitProfile,
  type PlacedProfile,
  type Steps,
  type Window,
} from '../../src/load/index.js';
import { profileLimitAt } from '../../src/load/schedules.js';

/** A Monday, 00:00 UTC: daily and weekly recurrences start on it. */
const MONDAY = Date.UTC(2026, 0, 5);
const HOUR_MS = 3_600_000;

/** A limit in tenths of an ampere, or none. */
const limitArbitrary = fc.option(
  fc.integer({ min: 0, max: 640 }).map((tenths) => tenths / 10),
  { nil: undefined },
);

const windowArbitrary: fc.Arbitrary<Window> = fc
  .record({ fromS: fc.integer({ min: 0, max: 14 * 86_400 }), lengthS: fc.integer({ min: 1, max: 3 * 86_400 }) })
  .map(({ fromS, lengthS }) => ({ fromMs: MONDAY + fromS * 1000, toMs: MONDAY + (fromS + lengthS) * 1000 }));

/** Steps over a window, changing at arbitrary (also sub-second) instants. */
function stepsArbitrary(window: Window): fc.Arbitrary<Steps> {
  return fc
    .record({
      first: limitArbitrary,
      later: fc.array(
        fc.record({ atMs: fc.integer({ min: window.fromMs + 1, max: window.toMs - 1 }), limitA: limitArbitrary }),
        {
          maxLength: 12,
        },
      ),
    })
    .map(({ first, later }) => {
      const sorted = [...new Map(later.map((s) => [s.atMs, s])).values()].sort((a, b) => a.atMs - b.atMs);
      return { window, steps: [{ atMs: window.fromMs, limitA: first }, ...sorted] };
    });
}

/** Instants to look at: arbitrary ones in the window, and every step's own start. */
function instantsOf(window: Window, ...steps: Steps[]): fc.Arbitrary<number[]> {
  const starts = steps.flatMap((s) => s.steps.map((x) => x.atMs));
  return fc
    .array(fc.integer({ min: window.fromMs, max: window.toMs - 1 }), { minLength: 1, maxLength: 30 })
    .map((instants) => [...instants, ...starts]);
}

const lower = (x: number | undefined, y: number | undefined) =>
  x === undefined ? y : y === undefined ? x : Math.min(x, y);

/**
 * Two limits combined the plain way, to judge the one-pass merge by: read both at the window's start and at every
 * step of either inside it, neighbours alike merged.
 */
function combinedPlainly<L>(a: Steps<L>, b: Steps<L>, f: (x: L, y: L) => L): Steps<L> {
  const { fromMs, toMs } = a.window;
  const inside = [...a.steps, ...b.steps].map((s) => s.atMs).filter((t) => t > fromMs && t < toMs);
  const steps: Array<{ atMs: number; limitA: L }> = [];
  for (const atMs of [fromMs, ...new Set(inside)].sort((x, y) => x - y)) {
    const limitA = f(limitAt(a, atMs), limitAt(b, atMs));
    if (steps.length === 0 || steps.at(-1)!.limitA !== limitA) steps.push({ atMs, limitA });
  }
  return { window: a.window, steps };
}

/** Periods the plain way: each candidate second's lowest limit, from every step overlapping it. */
function periodsPlainly(steps: Steps<number>): Array<{ startS: number; limit: number }> {
  const { fromMs, toMs } = steps.window;
  const starts = [
    ...new Set(steps.steps.flatMap((s) => [Math.floor((s.atMs - fromMs) / 1000), Math.ceil((s.atMs - fromMs) / 1000)])),
  ]
    .filter((startS) => fromMs + startS * 1000 < toMs)
    .sort((x, y) => x - y);
  const periods: Array<{ startS: number; limit: number }> = [];
  starts.forEach((startS, i) => {
    const endMs = i + 1 < starts.length ? fromMs + starts[i + 1]! * 1000 : toMs;
    const beginMs = fromMs + startS * 1000;
    const overlapping = steps.steps.filter((s, j) => s.atMs < endMs && (steps.steps[j + 1]?.atMs ?? toMs) > beginMs);
    const limit = Math.floor(Math.min(...overlapping.map((s) => s.limitA)) * 10 + 1e-6) / 10;
    if (periods.at(-1)?.limit !== limit) periods.push({ startS, limit });
  });
  return periods;
}

/** Steps as they must come out: the first at the window's start, then in time order, no two neighbours alike. */
function expectWellFormed(steps: Steps): void {
  expect(steps.steps[0]?.atMs).toBe(steps.window.fromMs);
  steps.steps.forEach((s, i) => {
    if (i === 0) return;
    expect(s.atMs).toBeGreaterThan(steps.steps[i - 1]!.atMs);
    expect(s.atMs).toBeLessThan(steps.window.toMs);
    expect(s.limitA).not.toBe(steps.steps[i - 1]!.limitA);
  });
}

describe('the lower of two limits over time (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles)', () => {
  it('at every instant equals the lower of the two, so it never exceeds either', () => {
    const pair = windowArbitrary.chain((window) =>
      fc
        .tuple(stepsArbitrary(window), stepsArbitrary(window))
        .chain(([a, b]) => fc.record({ a: fc.constant(a), b: fc.constant(b), instants: instantsOf(window, a, b) })),
    );
    fc.assert(
      fc.property(pair, ({ a, b, instants }) => {
        const both = lowerOf(a, b);
        expectWellFormed(both);
        for (const t of instants) {
          const [x, y, z] = [limitAt(a, t), limitAt(b, t), limitAt(both, t)];
          expect(z).toBe(lower(x, y));
          if (x !== undefined) expect(z).toBeLessThanOrEqual(x);
          if (y !== undefined) expect(z).toBeLessThanOrEqual(y);
        }
      }),
    );
  });

  it('the lower and the sum of two, and their periods, are what working them out the plain way gives', () => {
    const pair = windowArbitrary.chain((window) => fc.tuple(stepsArbitrary(window), stepsArbitrary(window)));
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(lowerOf(a, b)).toEqual(combinedPlainly(a, b, lower));
        const sum = (x: number | undefined, y: number | undefined) =>
          x === undefined || y === undefined ? undefined : x + y;
        expect(sumOf(a, b)).toEqual(combinedPlainly(a, b, sum));
        const capped16 = capped(a, 16);
        expect(periodsOf(capped16)).toEqual(periodsPlainly(capped16));
      }),
    );
  });

  it('as periods: in order from 0 in whole seconds, each second at most what any instant of it allows', () => {
    const input = windowArbitrary.chain((window) =>
      fc
        .tuple(stepsArbitrary(window), fc.integer({ min: 0, max: 640 }))
        .chain(([steps, capTenths]) =>
          fc.record({ steps: fc.constant(capped(steps, capTenths / 10)), instants: instantsOf(window, steps) }),
        ),
    );
    fc.assert(
      fc.property(input, ({ steps, instants }) => {
        const periods = periodsOf(steps);
        const { fromMs } = steps.window;
        expect(periods[0]?.startS).toBe(0);
        periods.forEach((p, i) => {
          expect(Number.isInteger(p.startS)).toBe(true);
          expect(Math.round(p.limit * 10)).toBeCloseTo(p.limit * 10, 9);
          if (i > 0) {
            expect(p.startS).toBeGreaterThan(periods[i - 1]!.startS);
            expect(p.limit).not.toBe(periods[i - 1]!.limit);
          }
        });
        for (const t of instants) {
          const second = Math.floor((t - fromMs) / 1000);
          const period = periods.filter((p) => p.startS <= second).at(-1)!;
          expect(period.limit).toBeLessThanOrEqual(limitAt(steps, t));
          // A second the limit does not change in loses at most the rounding down to 0.1 A.
          const secondStart = fromMs + second * 1000;
          const sameAll = steps.steps.every((s) => s.atMs <= secondStart || s.atMs >= secondStart + 1000);
          if (sameAll) expect(period.limit).toBeGreaterThan(limitAt(steps, t) - 0.1 - 1e-9);
        }
      }),
    );
  });
});

/** Profiles for connector 1 of a three-phase station, or the station's (0), at arbitrary times and levels. */
const profileArbitrary: fc.Arbitrary<PlacedProfile> = fc
  .record({
    id: fc.integer({ min: 1, max: 50 }),
    stackLevel: fc.integer({ min: 0, max: 3 }),
    purpose: fc.constantFrom<LimitProfile['purpose']>('stationMaximum', 'transactionDefault', 'transaction'),
    connectorId: fc.constantFrom(0, 1),
    kind: fc.constantFrom<LimitProfile['kind']>('absolute', 'recurring', 'relative'),
    recurrency: fc.constantFrom<'daily' | 'weekly'>('daily', 'weekly'),
    startS: fc.option(fc.integer({ min: 0, max: 10 * 86_400 }), { nil: undefined }),
    validFromS: fc.option(fc.integer({ min: 0, max: 10 * 86_400 }), { nil: undefined }),
    validForS: fc.option(fc.integer({ min: 1, max: 5 * 86_400 }), { nil: undefined }),
    durationS: fc.option(fc.integer({ min: 1, max: 2 * 86_400 }), { nil: undefined }),
    unit: fc.constantFrom<'A' | 'W'>('A', 'W'),
    periods: fc.array(
      fc.record({ startS: fc.integer({ min: 1, max: 86_400 }), tenths: fc.integer({ min: 0, max: 400 }) }),
      {
        maxLength: 5,
      },
    ),
    firstTenths: fc.integer({ min: 0, max: 400 }),
    receivedS: fc.integer({ min: 0, max: 10 * 86_400 }),
  })
  .map((p): PlacedProfile => {
    const unitFactor = p.unit === 'W' ? 690 : 1;
    const periods = [{ startS: 0, tenths: p.firstTenths }, ...p.periods]
      .filter((x, i, all) => all.findIndex((y) => y.startS === x.startS) === i)
      .sort((a, b) => a.startS - b.startS)
      .map((x) => ({ startS: x.startS, limit: (x.tenths / 10) * unitFactor }));
    const validFromMs = p.validFromS === undefined ? undefined : MONDAY + p.validFromS * 1000;
    return {
      connectorId: p.purpose === 'stationMaximum' ? 0 : p.purpose === 'transaction' ? 1 : p.connectorId,
      receivedAtMs: MONDAY + p.receivedS * 1000,
      ...(p.purpose === 'transaction' && { transactionId: 7 }),
      profile: {
        id: p.id,
        stackLevel: p.stackLevel,
        purpose: p.purpose,
        kind: p.kind,
        ...(p.kind === 'recurring' && { recurrency: p.recurrency }),
        ...(validFromMs !== undefined && { validFromMs }),
        ...(validFromMs !== undefined && p.validForS !== undefined && { validToMs: validFromMs + p.validForS * 1000 }),
        schedule: {
          ...(p.startS !== undefined && { startMs: MONDAY + p.startS * 1000 }),
          ...(p.durationS !== undefined && { durationS: p.durationS }),
          unit: p.unit,
          periods,
        },
      },
    };
  });

/**
 * OCPP's stacking, instant by instant: the transaction's own profile of the highest stack level that runs then, else
 * the default's (the connector's own before the station's at a level), capped by the station maximum.
 */
function stackedAt(profiles: readonly PlacedProfile[], place: ConnectorPlace, t: number): number | undefined {
  const best = (purpose: LimitProfile['purpose']) => {
    const running = profiles
      .filter((p) => p.profile.purpose === purpose)
      .filter((p) => purpose !== 'transaction' || p.transactionId === place.transaction?.id)
      .filter((p) => purpose !== 'transactionDefault' || p.connectorId === 0 || p.connectorId === place.connectorId)
      .map((p) => ({ p, limit: profileLimitAt(p, place, t) }))
      .filter((x) => x.limit !== undefined)
      .sort((x, y) => y.p.profile.stackLevel - x.p.profile.stackLevel || y.p.connectorId - x.p.connectorId);
    return running[0]?.limit;
  };
  return lower(best('transaction') ?? best('transactionDefault'), best('stationMaximum'));
}

describe("a connector's composite of the CSMS's profiles (OCPP 1.6 §3.13, 2.0.1 K)", () => {
  it('at every instant is what the stacking rules give then; with a load limit, never above it or the stack', () => {
    const input = fc
      .record({
        profiles: fc.array(profileArbitrary, { maxLength: 10 }),
        window: windowArbitrary,
        transaction: fc.option(fc.integer({ min: 0, max: 12 * 86_400 }), { nil: undefined }),
        loadTenths: fc.integer({ min: 0, max: 320 }),
      })
      .chain((r) =>
        fc.record({
          r: fc.constant(r),
          instants: fc.array(fc.integer({ min: r.window.fromMs, max: r.window.toMs - 1 }), {
            minLength: 1,
            maxLength: 40,
          }),
        }),
      );
    fc.assert(
      fc.property(input, ({ r, instants }) => {
        const place: ConnectorPlace = {
          connectorId: 1,
          phases: 3,
          ...(r.transaction !== undefined && { transaction: { id: 7, startedAtMs: MONDAY + r.transaction * 1000 } }),
        };
        const composite = compositeOf(r.profiles, place, r.window);
        expectWellFormed(composite);
        const sent = capped(composite, r.loadTenths / 10);
        for (const t of [...instants, ...composite.steps.map((s) => s.atMs)]) {
          const stacked = stackedAt(r.profiles, place, t);
          expect(limitAt(composite, t)).toBe(stacked);
          expect(limitAt(sent, t)).toBe(lower(stacked, r.loadTenths / 10));
        }
      }),
    );
  });

  it('worked out once over a longer window and read over any window inside it, is what working it out there gives', () => {
    const input = fc
      .record({
        profiles: fc.array(profileArbitrary, { maxLength: 6 }),
        window: windowArbitrary,
        transaction: fc.option(fc.integer({ min: 0, max: 12 * 86_400 }), { nil: undefined }),
        anyStart: fc.boolean(),
        aheadS: fc.integer({ min: 0, max: 2 * 86_400 }),
      })
      .chain((r) =>
        fc.record({
          r: fc.constant(r),
          fromMs: fc.integer({ min: r.window.fromMs, max: r.window.toMs - 1 }),
          lengthMs: fc.integer({ min: 1, max: r.window.toMs - r.window.fromMs }),
        }),
      );
    fc.assert(
      fc.property(input, ({ r, fromMs, lengthMs }) => {
        const place: ConnectorPlace = {
          connectorId: 1,
          phases: 3,
          anyStart: r.anyStart,
          ...(r.transaction !== undefined && { transaction: { id: 7, startedAtMs: MONDAY + r.transaction * 1000 } }),
        };
        const longer = { fromMs: r.window.fromMs, toMs: r.window.toMs + r.aheadS * 1000 };
        const inside = { fromMs, toMs: Math.min(fromMs + lengthMs, r.window.toMs) };
        expect(within(compositeOf(r.profiles, place, longer), inside)).toEqual(compositeOf(r.profiles, place, inside));
      }),
    );
  });

  it('a daily recurring profile repeats every day: 10 A from 18:00 to 22:00, else the default 32 A', () => {
    const evening: PlacedProfile = {
      connectorId: 0,
      receivedAtMs: MONDAY,
      profile: {
        id: 1,
        stackLevel: 1,
        purpose: 'transactionDefault',
        kind: 'recurring',
        recurrency: 'daily',
        schedule: {
          startMs: MONDAY + 18 * HOUR_MS,
          durationS: 4 * 3600,
          unit: 'A',
          periods: [{ startS: 0, limit: 10 }],
        },
      },
    };
    const base: PlacedProfile = {
      connectorId: 0,
      receivedAtMs: MONDAY,
      profile: {
        id: 2,
        stackLevel: 0,
        purpose: 'transactionDefault',
        kind: 'relative',
        schedule: { unit: 'A', periods: [{ startS: 0, limit: 32 }] },
      },
    };
    const window = { fromMs: MONDAY + 24 * HOUR_MS, toMs: MONDAY + 4 * 24 * HOUR_MS };
    const composite = compositeOf([evening, base], { connectorId: 1, phases: 3 }, window);
    const at = (day: number, hour: number) => MONDAY + (day * 24 + hour) * HOUR_MS;
    expect(composite.steps).toEqual([
      { atMs: at(1, 0), limitA: 32 },
      ...[1, 2, 3].flatMap((day) => [
        { atMs: at(day, 18), limitA: 10 },
        { atMs: at(day, 22), limitA: 32 },
      ]),
    ]);
    expect(periodsOf(capped(composite, 16)).slice(0, 3)).toEqual([
      { startS: 0, limit: 16 },
      { startS: 18 * 3600, limit: 10 },
      { startS: 22 * 3600, limit: 16 },
    ]);
  });

  it('a W limit is A per phase at 230 V on the connector phases; a profile not yet valid or expired limits nothing', () => {
    const profile = (id: number, over: Partial<LimitProfile>): PlacedProfile => ({
      connectorId: 1,
      transactionId: 7,
      receivedAtMs: MONDAY,
      profile: {
        id,
        stackLevel: 2,
        purpose: 'transaction',
        kind: 'absolute',
        schedule: { startMs: MONDAY, unit: 'W', periods: [{ startS: 0, limit: 11_040 }] },
        ...over,
      },
    });
    const place = (phases: 1 | 3): ConnectorPlace => ({
      connectorId: 1,
      phases,
      transaction: { id: 7, startedAtMs: MONDAY },
    });
    const window = { fromMs: MONDAY, toMs: MONDAY + HOUR_MS };
    expect(compositeOf([profile(1, {})], place(3), window).steps).toEqual([{ atMs: MONDAY, limitA: 16 }]);
    expect(compositeOf([profile(1, {})], place(1), window).steps).toEqual([{ atMs: MONDAY, limitA: 48 }]);
    const later = profile(1, { validFromMs: MONDAY + 600_000, validToMs: MONDAY + 1_200_000 });
    expect(compositeOf([later], place(3), window).steps).toEqual([
      { atMs: MONDAY, limitA: undefined },
      { atMs: MONDAY + 600_000, limitA: 16 },
      { atMs: MONDAY + 1_200_000, limitA: undefined },
    ]);
    // Another transaction's profile is not this one's.
    expect(
      compositeOf([profile(1, {})], { ...place(3), transaction: { id: 8, startedAtMs: MONDAY } }, window).steps,
    ).toEqual([{ atMs: MONDAY, limitA: undefined }]);
  });
});
