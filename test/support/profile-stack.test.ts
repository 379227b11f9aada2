import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { drawnA, ProfileStack, type ChargingProfile, type Purpose, type RunningTransaction } from './profile-stack.js';

const T0 = new Date('2026-11-26T12:00:00.000Z');
const after = (s: number): Date => new Date(T0.getTime() + s * 1000);
const TX: RunningTransaction = { id: 7, startedAt: T0 };

/** A one-period profile in A; the rest as given. */
function profile(
  id: number,
  purpose: Purpose,
  limit: number,
  more: Partial<Omit<ChargingProfile, 'schedule'>> & { schedule?: Partial<ChargingProfile['schedule']> } = {},
): ChargingProfile {
  const { schedule, ...rest } = more;
  return {
    id,
    stackLevel: 0,
    purpose,
    kind: 'Relative',
    ...rest,
    schedule: { unit: 'A', periods: [{ startPeriodS: 0, limit }], ...schedule },
  };
}

const stack16 = () => new ProfileStack({ sameLevelOtherId: 'replace' });
const tenths = fc.integer({ min: 0, max: 800 }).map((n) => n / 10);
const level = fc.integer({ min: 0, max: 5 });
interface DefaultProfile {
  id: number;
  on: number;
  stackLevel: number;
  limit: number;
  validToS: number | undefined;
}
/** TxDefaultProfiles with distinct ids, on the station (0) or connector 1, any stack level and validity. */
const defaults: fc.Arbitrary<DefaultProfile[]> = fc.uniqueArray(
  fc.record({
    id: fc.integer({ min: 1, max: 50 }),
    on: fc.constantFrom(0, 1),
    stackLevel: level,
    limit: tenths,
    validToS: fc.option(fc.integer({ min: 1, max: 7200 }), { nil: undefined }),
  }),
  { selector: (d) => d.id, maxLength: 4 },
);

function withDefaults(stack: ProfileStack, drawn: DefaultProfile[]): ProfileStack {
  for (const d of drawn) {
    const validTo = d.validToS === undefined ? {} : { validTo: after(d.validToS) };
    stack.set(d.on, profile(d.id, 'TxDefaultProfile', d.limit, { stackLevel: d.stackLevel, ...validTo }), TX, T0);
  }
  return stack;
}

describe('the simulated stations stack charging profiles as OCPP has them (1.6 §3.13, 2.0.1 K)', () => {
  it('a TxProfile of the running transaction overrides any TxDefaultProfile while it is valid', () => {
    fc.assert(
      fc.property(defaults, tenths, level, fc.integer({ min: 1, max: 3600 }), (drawn, limit, stackLevel, validToS) => {
        const stack = withDefaults(stack16(), drawn);
        const tx = profile(100, 'TxProfile', limit, { stackLevel, validTo: after(validToS), transactionId: 7 });
        expect(stack.set(1, tx, TX, T0)).toBe('Accepted');
        for (const s of [0, validToS / 2, validToS - 0.001]) expect(stack.limitAt(1, after(s), TX)).toBe(limit);
      }),
    );
  });

  it('from validTo on the TxDefaultProfiles apply as if the TxProfile had never been', () => {
    fc.assert(
      fc.property(
        defaults,
        tenths,
        fc.integer({ min: 1, max: 3600 }),
        fc.nat(7200),
        (drawn, limit, validToS, lateS) => {
          const stack = withDefaults(stack16(), drawn);
          stack.set(1, profile(100, 'TxProfile', limit, { validTo: after(validToS) }), TX, T0);
          const at = after(validToS + lateS);
          expect(stack.limitAt(1, at, TX)).toBe(withDefaults(stack16(), drawn).limitAt(1, at, TX));
        },
      ),
    );
  });

  it('within a purpose the highest stack level prevails', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(level, { minLength: 2, maxLength: 4 }),
        fc.array(tenths, { minLength: 4, maxLength: 4 }),
        (levels, limits) => {
          const stack = stack16();
          levels.forEach((stackLevel, i) =>
            stack.set(0, profile(i + 1, 'TxDefaultProfile', limits[i] ?? 0, { stackLevel }), undefined, T0),
          );
          const top = levels.indexOf(Math.max(...levels));
          expect(stack.limitAt(1, after(1), TX)).toBe(limits[top]);
        },
      ),
    );
  });

  it('a ChargePointMaxProfile caps whatever else holds', () => {
    fc.assert(
      fc.property(defaults, fc.option(tenths, { nil: undefined }), tenths, fc.nat(7200), (drawn, txLimit, cap, atS) => {
        const stack = withDefaults(stack16(), drawn);
        if (txLimit !== undefined) stack.set(1, profile(100, 'TxProfile', txLimit), TX, T0);
        const uncapped = stack.limitAt(1, after(atS), TX);
        stack.set(0, profile(200, 'ChargePointMaxProfile', cap, { kind: 'Absolute' }), undefined, T0);
        expect(stack.limitAt(1, after(atS), TX)).toBe(uncapped === undefined ? cap : Math.min(uncapped, cap));
      }),
    );
  });

  it('a profile with an id already held replaces it, wherever it is', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ on: fc.constantFrom(1, 2), limit: tenths }), { minLength: 1 }), (sends) => {
        const stack = stack16();
        const running = { id: 7, startedAt: T0 };
        for (const { on, limit } of sends) stack.set(on, profile(1001, 'TxProfile', limit), running, T0);
        const last = sends.at(-1);
        expect([...stack.profilesOf(1), ...stack.profilesOf(2)]).toEqual([
          profile(1001, 'TxProfile', last?.limit ?? 0),
        ]);
      }),
    );
  });

  it('another id at a taken stack level and purpose: 1.6 replaces, 2.0.1 refuses', () => {
    const v16 = stack16();
    v16.set(1, profile(1, 'TxProfile', 10), TX, T0);
    expect(v16.set(1, profile(2, 'TxProfile', 16), TX, T0)).toBe('Accepted');
    expect(v16.profilesOf(1).map((p) => p.id)).toEqual([2]);
    const v201 = new ProfileStack({ sameLevelOtherId: 'reject' });
    v201.set(1, profile(1, 'TxProfile', 10), TX, T0);
    expect(v201.set(1, profile(2, 'TxProfile', 16), TX, T0)).toBe('Rejected');
    expect(v201.limitAt(1, T0, TX)).toBe(10);
  });

  it('a TxProfile needs a running transaction on a connector, and that transaction if it names one', () => {
    const stack = stack16();
    expect(stack.set(1, profile(1, 'TxProfile', 10), undefined, T0)).toBe('Rejected');
    expect(stack.set(0, profile(1, 'TxProfile', 10), TX, T0)).toBe('Rejected');
    expect(stack.set(1, profile(1, 'TxProfile', 10, { transactionId: 8 }), TX, T0)).toBe('Rejected');
    expect(stack.set(1, profile(200, 'ChargePointMaxProfile', 10), undefined, T0)).toBe('Rejected');
    expect(stack.set(1, profile(1, 'TxProfile', 10, { transactionId: 7 }), TX, T0)).toBe('Accepted');
    stack.endTransaction(1);
    expect(stack.profilesOf(1)).toEqual([]);
  });

  it('schedules: Relative periods from the transaction start, Absolute from startSchedule, duration, validFrom, W', () => {
    const stack = stack16();
    const periods = [
      { startPeriodS: 0, limit: 16 },
      { startPeriodS: 600, limit: 8 },
    ];
    stack.set(0, profile(1, 'TxDefaultProfile', 32), undefined, T0);
    stack.set(
      0,
      profile(2, 'TxDefaultProfile', 0, { stackLevel: 1, schedule: { periods, durationS: 1200 } }),
      undefined,
      T0,
    );
    const lateStart = { id: 9, startedAt: after(300) };
    expect([300, 899, 900, 1499, 1500].map((s) => stack.limitAt(1, after(s), lateStart))).toEqual([16, 16, 8, 8, 32]);

    const absolute = stack16();
    const startSchedule = after(3600);
    absolute.set(
      0,
      profile(3, 'TxDefaultProfile', 10, { kind: 'Absolute', schedule: { startSchedule } }),
      undefined,
      T0,
    );
    expect([absolute.limitAt(1, after(3599), TX), absolute.limitAt(1, after(3600), TX)]).toEqual([undefined, 10]);

    const later = stack16();
    later.set(0, profile(4, 'TxDefaultProfile', 6, { validFrom: after(60) }), undefined, T0);
    expect([later.limitAt(1, after(59), TX), later.limitAt(1, after(60), TX)]).toEqual([undefined, 6]);

    const watts = stack16();
    watts.set(0, profile(5, 'TxDefaultProfile', 11_040, { schedule: { unit: 'W' } }), undefined, T0);
    expect(watts.limitAt(1, T0, TX)).toBeCloseTo(16);
  });

  it('ClearChargingProfile by id, else by every criterion given', () => {
    const stack = stack16();
    stack.set(0, profile(1, 'TxDefaultProfile', 6), undefined, T0);
    stack.set(1, profile(2, 'TxDefaultProfile', 10, { stackLevel: 1 }), undefined, T0);
    stack.set(1, profile(3, 'TxProfile', 16), TX, T0);
    expect(stack.clear({ id: 9 })).toBe('Unknown');
    expect(stack.clear({ connectorId: 1, purpose: 'TxDefaultProfile' })).toBe('Accepted');
    expect(stack.limitAt(1, T0, TX)).toBe(16);
    expect(stack.clear({ id: 3 })).toBe('Accepted');
    expect(stack.limitAt(1, T0, TX)).toBe(6);
  });

  it('a car draws its demand within the limit, and nothing under the 6 A minimum', () => {
    expect([drawnA(20, undefined), drawnA(20, 32), drawnA(20, 10.5), drawnA(20, 6), drawnA(20, 5.9)]).toEqual([
      20, 20, 10.5, 6, 0,
    ]);
  });
});
