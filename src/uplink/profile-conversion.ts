import type { LimitProfile, ProfilePurpose } from '../load/index.js';

/**
 * The CSMS's charging profiles in load management's words (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles): what both
 * OCPP versions share of reading a profile into a LimitProfile and of what OCPP forbids in one; each version's own
 * fields are read in v16/profile-conversion.ts and v201/profile-conversion.ts. The transaction a profile names stays
 * with the caller, which maps the CSMS's id to chargegate's.
 */

interface ScheduleFields {
  duration?: number;
  minChargingRate?: number;
  chargingSchedulePeriod: ReadonlyArray<{
    startPeriod: number;
    limit: number;
    numberPhases?: number;
    phaseToUse?: number;
  }>;
}

/**
 * Stack levels, limits, durations and rates are never negative; periods start at 0 and then ascend (each one's start
 * is the previous one's end, 1.6 §7.13, 2.0.1 K01.FR.31, K01.FR.35); phases are 1 to 3, and a phase to use is named
 * only for one phase (2.0.1 K01.FR.19).
 */
export function forbiddenIn(stackLevel: number, schedules: readonly ScheduleFields[]): string | undefined {
  const stack = notNegative('stackLevel', stackLevel);
  if (stack) return stack;
  for (const [i, schedule] of schedules.entries()) {
    const where = (period?: number): string => {
      const parts = [
        ...(schedules.length > 1 ? [`schedule ${i + 1}`] : []),
        ...(period === undefined ? [] : [`period ${period + 1}`]),
      ];
      return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
    };
    const why =
      notNegative('duration', schedule.duration, where()) ??
      notNegative('minChargingRate', schedule.minChargingRate, where()) ??
      schedule.chargingSchedulePeriod.map((p, k, all) => forbiddenPeriod(p, all[k - 1], where(k))).find(Boolean);
    if (why) return why;
  }
  return undefined;
}

function forbiddenPeriod(
  p: ScheduleFields['chargingSchedulePeriod'][number],
  previous: ScheduleFields['chargingSchedulePeriod'][number] | undefined,
  where: string,
): string | undefined {
  if (!previous && p.startPeriod !== 0) return `startPeriod ${p.startPeriod}${where}: the first period starts at 0`;
  if (previous && p.startPeriod <= previous.startPeriod)
    return `startPeriod ${p.startPeriod}${where}: periods start in ascending order`;
  const phases = (name: string, value: number | undefined): string | undefined =>
    value === undefined || (value >= 1 && value <= 3) ? undefined : `${name} ${value}${where}: OCPP takes 1 to 3`;
  return (
    notNegative('limit', p.limit, where) ??
    phases('numberPhases', p.numberPhases) ??
    phases('phaseToUse', p.phaseToUse) ??
    (p.phaseToUse !== undefined && p.numberPhases !== 1
      ? `phaseToUse ${p.phaseToUse}${where}: only with numberPhases 1`
      : undefined)
  );
}

export function notNegative(name: string, value: number | undefined, where = ''): string | undefined {
  return value !== undefined && value < 0 ? `${name} ${value}${where}: OCPP takes 0 or more` : undefined;
}

export function profileOf(
  id: number,
  purpose: ProfilePurpose,
  p: {
    stackLevel: number;
    chargingProfileKind: 'Absolute' | 'Recurring' | 'Relative';
    recurrencyKind?: 'Daily' | 'Weekly';
    validFrom?: string;
    validTo?: string;
  },
  s: {
    startSchedule?: string;
    duration?: number;
    chargingRateUnit: 'A' | 'W';
    chargingSchedulePeriod: ReadonlyArray<{ startPeriod: number; limit: number }>;
  },
): LimitProfile {
  const kind =
    p.chargingProfileKind === 'Absolute'
      ? 'absolute'
      : p.chargingProfileKind === 'Recurring'
        ? 'recurring'
        : 'relative';
  const timeOf = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));
  const validFromMs = timeOf(p.validFrom);
  const validToMs = timeOf(p.validTo);
  const startMs = timeOf(s.startSchedule);
  return {
    id,
    stackLevel: p.stackLevel,
    purpose,
    kind,
    ...(kind === 'recurring' && { recurrency: p.recurrencyKind === 'Weekly' ? 'weekly' : 'daily' }),
    ...(validFromMs !== undefined && { validFromMs }),
    ...(validToMs !== undefined && { validToMs }),
    schedule: {
      // A relative schedule counts from its transaction's start, whatever startSchedule says.
      ...(startMs !== undefined && kind !== 'relative' && { startMs }),
      ...(s.duration !== undefined && { durationS: s.duration }),
      unit: s.chargingRateUnit,
      // In order from 0: forbiddenIn16 and forbiddenIn201 refuse others.
      periods: s.chargingSchedulePeriod.map((period) => ({ startS: period.startPeriod, limit: period.limit })),
    },
  };
}
