import { describe, expect, it } from 'vitest';
import { compositeOf, periodsOf, capped } from '../../src/load/index.js';
import { profileFrom16, purposeFrom16 } from '../../src/uplink/v16/profile-conversion.js';
import { profileFrom201, purposeFrom201 } from '../../src/uplink/v201/profile-conversion.js';

const START = '2026-03-02T06:00:00.000Z';

describe("the CSMS's charging profiles read into load management's words", () => {
  it('1.6: purpose, kind, validity, schedule start and duration, unit, periods', () => {
    expect(
      profileFrom16({
        chargingProfileId: 12,
        transactionId: 5001,
        stackLevel: 2,
        chargingProfilePurpose: 'TxDefaultProfile',
        chargingProfileKind: 'Recurring',
        recurrencyKind: 'Weekly',
        validFrom: '2026-03-01T00:00:00Z',
        validTo: '2026-04-01T00:00:00Z',
        chargingSchedule: {
          startSchedule: START,
          duration: 7200,
          chargingRateUnit: 'W',
          chargingSchedulePeriod: [
            { startPeriod: 0, limit: 11_040 },
            { startPeriod: 3600, limit: 7360, numberPhases: 1 },
          ],
          minChargingRate: 1.5,
        },
      }),
    ).toEqual({
      id: 12,
      stackLevel: 2,
      purpose: 'transactionDefault',
      kind: 'recurring',
      recurrency: 'weekly',
      validFromMs: Date.parse('2026-03-01T00:00:00Z'),
      validToMs: Date.parse('2026-04-01T00:00:00Z'),
      schedule: {
        startMs: Date.parse(START),
        durationS: 7200,
        unit: 'W',
        periods: [
          { startS: 0, limit: 11_040 },
          { startS: 3600, limit: 7360 },
        ],
      },
    });
    expect(purposeFrom16('ChargePointMaxProfile')).toBe('stationMaximum');
    expect(purposeFrom16('TxProfile')).toBe('transaction');
  });

  it('a relative schedule counts from its transaction, whatever startSchedule says; a recurring one is daily unless weekly', () => {
    const relative = profileFrom16({
      chargingProfileId: 1,
      stackLevel: 0,
      chargingProfilePurpose: 'TxProfile',
      chargingProfileKind: 'Relative',
      chargingSchedule: {
        startSchedule: START,
        chargingRateUnit: 'A',
        chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }],
      },
    });
    expect(relative.schedule).toEqual({ unit: 'A', periods: [{ startS: 0, limit: 16 }] });
    expect(relative.kind).toBe('relative');
    const daily = profileFrom16({
      chargingProfileId: 2,
      stackLevel: 0,
      chargingProfilePurpose: 'ChargePointMaxProfile',
      chargingProfileKind: 'Recurring',
      chargingSchedule: {
        startSchedule: START,
        chargingRateUnit: 'A',
        chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }],
      },
    });
    expect([daily.purpose, daily.recurrency]).toEqual(['stationMaximum', 'daily']);
  });

  it("2.0.1: its first schedule (the one a car that does not choose gets), the station's maximum and external constraints as the station's cap", () => {
    const schedule = (id: number, limit: number) => ({
      id,
      startSchedule: START,
      chargingRateUnit: 'A' as const,
      chargingSchedulePeriod: [{ startPeriod: 0, limit }] as [{ startPeriod: number; limit: number }],
    });
    const tx = profileFrom201({
      id: 40,
      stackLevel: 1,
      chargingProfilePurpose: 'TxProfile',
      chargingProfileKind: 'Absolute',
      transactionId: 'station-tx-1',
      chargingSchedule: [schedule(1, 10), schedule(2, 32)],
    });
    expect(tx).toEqual({
      id: 40,
      stackLevel: 1,
      purpose: 'transaction',
      kind: 'absolute',
      schedule: { startMs: Date.parse(START), unit: 'A', periods: [{ startS: 0, limit: 10 }] },
    });
    for (const chargingProfilePurpose of ['ChargingStationMaxProfile', 'ChargingStationExternalConstraints'] as const)
      expect(
        profileFrom201({
          id: 41,
          stackLevel: 0,
          chargingProfilePurpose,
          chargingProfileKind: 'Absolute',
          chargingSchedule: [schedule(3, 20)],
        }).purpose,
      ).toBe('stationMaximum');
    expect(purposeFrom201('TxDefaultProfile')).toBe('transactionDefault');
    expect(purposeFrom201('ChargingStationMaxProfile')).toBe('stationMaximum');

    // As load management composes it: the transaction's 10 A under its own limit of 16 A, from the schedule's start.
    const window = { fromMs: Date.parse(START), toMs: Date.parse(START) + 600_000 };
    const place = { connectorId: 1, phases: 3 as const, transaction: { id: 7, startedAtMs: Date.parse(START) } };
    const composite = compositeOf(
      [{ connectorId: 1, transactionId: 7, receivedAtMs: window.fromMs, profile: tx }],
      place,
      window,
    );
    expect(periodsOf(capped(composite, 16))).toEqual([{ startS: 0, limit: 10 }]);
  });
});
