import type { Ocpp201Actions, SetChargingProfileRequest } from '../../src/ocpp/index.js';

/**
 * The charging profiles a simulated station holds, and the limit they put in force at a time, worked out from the
 * OCPP rules (1.6 §3.13 "Smart Charging", 2.0.1 part 2 K "Smart Charging") rather than from what chargegate means
 * to send: a station that obeys, so that tests check what a real one would do with chargegate's profiles.
 */

/** 2.0.1's ChargingStationMaxProfile and ChargingStationExternalConstraints both cap the station, as 1.6's does. */
export type Purpose = 'ChargePointMaxProfile' | 'TxDefaultProfile' | 'TxProfile';

export interface ChargingProfile {
  id: number;
  stackLevel: number;
  purpose: Purpose;
  kind: 'Absolute' | 'Recurring' | 'Relative';
  recurrency?: 'Daily' | 'Weekly';
  validFrom?: Date;
  validTo?: Date;
  transactionId?: number | string;
  schedule: {
    startSchedule?: Date;
    durationS?: number;
    unit: 'A' | 'W';
    periods: Array<{ startPeriodS: number; limit: number; numberPhases?: number }>;
  };
}

/** The transaction running on a connector, as far as profiles care. */
export interface RunningTransaction {
  id: number | string;
  startedAt: Date;
}

export interface StackRules {
  /**
   * A profile with another id at a stack level and purpose already taken on the connector: 1.6 replaces the one there
   * (§5.16), 2.0.1 refuses the new one (K01).
   */
  sameLevelOtherId: 'replace' | 'reject';
}

interface Installed {
  connectorId: number;
  profile: ChargingProfile;
  receivedAt: Date;
}

/** Volts per phase to turn a W limit into A (a European low-voltage supply). */
const VOLTS = 230;
/** IEC 61851-1: a pilot signal below 6 A allows no charging, so a car pauses rather than draw less. */
const MIN_CHARGING_A = 6;
const RECURRENCE_S = { Daily: 86_400, Weekly: 604_800 };

export class ProfileStack {
  private installed: Installed[] = [];

  constructor(private readonly rules: StackRules) {}

  /**
   * SetChargingProfile as a station takes it (1.6 §5.16, 2.0.1 K01): a TxProfile only on a connector with a running
   * transaction (and that transaction, if it names one), a station maximum only on connector 0; the same id replaces.
   */
  set(
    connectorId: number,
    profile: ChargingProfile,
    transaction: RunningTransaction | undefined,
    at = new Date(),
  ): 'Accepted' | 'Rejected' {
    if (profile.purpose === 'TxProfile') {
      if (connectorId === 0 || !transaction) return 'Rejected';
      if (profile.transactionId !== undefined && profile.transactionId !== transaction.id) return 'Rejected';
    }
    if (profile.purpose === 'ChargePointMaxProfile' && connectorId !== 0) return 'Rejected';
    const sameLevel = (i: Installed) =>
      i.connectorId === connectorId &&
      i.profile.purpose === profile.purpose &&
      i.profile.stackLevel === profile.stackLevel &&
      i.profile.id !== profile.id;
    if (this.rules.sameLevelOtherId === 'reject' && this.installed.some(sameLevel)) return 'Rejected';
    this.installed = this.installed.filter((i) => i.profile.id !== profile.id && !sameLevel(i));
    this.installed.push({ connectorId, profile, receivedAt: at });
    return 'Accepted';
  }

  /** ClearChargingProfile: by id, else every profile matching all the criteria given (1.6 §5.5, 2.0.1 K10). */
  clear(criteria: {
    id?: number;
    connectorId?: number;
    purpose?: Purpose;
    stackLevel?: number;
  }): 'Accepted' | 'Unknown' {
    const matches = ({ connectorId, profile }: Installed): boolean =>
      criteria.id !== undefined
        ? profile.id === criteria.id
        : (criteria.connectorId === undefined || connectorId === criteria.connectorId) &&
          (criteria.purpose === undefined || profile.purpose === criteria.purpose) &&
          (criteria.stackLevel === undefined || profile.stackLevel === criteria.stackLevel);
    const before = this.installed.length;
    this.installed = this.installed.filter((i) => !matches(i));
    return this.installed.length < before ? 'Accepted' : 'Unknown';
  }

  /** A TxProfile lives as long as its transaction (1.6 §3.13.1, 2.0.1 K01). */
  endTransaction(connectorId: number): void {
    this.installed = this.installed.filter((i) => i.connectorId !== connectorId || i.profile.purpose !== 'TxProfile');
  }

  /** The profiles held for a connector (0: the station's own), in the order received. */
  profilesOf(connectorId: number): ChargingProfile[] {
    return this.installed.filter((i) => i.connectorId === connectorId).map((i) => i.profile);
  }

  /**
   * The limit in force on a connector, A per phase, or undefined when no profile limits it. Within a purpose the
   * profile of the highest stack level that is valid and whose schedule runs prevails (a station-wide TxDefaultProfile
   * yields to the connector's own at the same level); a TxProfile of the running transaction overrides the
   * TxDefaultProfile, and the station maximum caps whichever holds (1.6 §3.13.2-3.13.3, 2.0.1 K "Stacking").
   */
  limitAt(connectorId: number, at: Date, transaction?: RunningTransaction): number | undefined {
    const prevailing = (purpose: Purpose, connectors: number[]): number | undefined => {
      let best: { stackLevel: number; specific: boolean; limit: number } | undefined;
      for (const { connectorId: on, profile, receivedAt } of this.installed) {
        if (profile.purpose !== purpose || !connectors.includes(on)) continue;
        const limit = limitOf(profile, at, receivedAt, transaction);
        if (limit === undefined) continue;
        const candidate = { stackLevel: profile.stackLevel, specific: on !== 0, limit };
        if (
          !best ||
          candidate.stackLevel > best.stackLevel ||
          (candidate.stackLevel === best.stackLevel && candidate.specific && !best.specific)
        )
          best = candidate;
      }
      return best?.limit;
    };
    const ownTransaction = transaction && prevailing('TxProfile', [connectorId]);
    const limit = ownTransaction ?? prevailing('TxDefaultProfile', [connectorId, 0]);
    const cap = prevailing('ChargePointMaxProfile', [0]);
    if (limit === undefined) return cap;
    return cap === undefined ? limit : Math.min(limit, cap);
  }
}

/** What a car that would take `demandA` draws under `limitA`: the lower, or nothing under the 6 A minimum. */
export function drawnA(demandA: number, limitA: number | undefined): number {
  const offered = Math.min(demandA, limitA ?? demandA);
  return offered < MIN_CHARGING_A ? 0 : offered;
}

/** The profile's limit at `at` in A, or undefined when it is not valid or its schedule is not running then. */
function limitOf(
  profile: ChargingProfile,
  at: Date,
  receivedAt: Date,
  transaction: RunningTransaction | undefined,
): number | undefined {
  const t = at.getTime();
  if (profile.validFrom && t < profile.validFrom.getTime()) return undefined;
  if (profile.validTo && t >= profile.validTo.getTime()) return undefined;
  if (profile.transactionId !== undefined && profile.transactionId !== transaction?.id) return undefined;
  const { schedule } = profile;
  // Relative: from the start of the transaction (a connector without one would start it now); the others from
  // startSchedule, or from when the station took the profile if it has none.
  const startMs =
    profile.kind === 'Relative'
      ? (transaction?.startedAt.getTime() ?? t)
      : (schedule.startSchedule ?? receivedAt).getTime();
  let offsetS = (t - startMs) / 1000;
  if (offsetS < 0) return undefined;
  if (profile.kind === 'Recurring') offsetS %= RECURRENCE_S[profile.recurrency ?? 'Daily'];
  if (schedule.durationS !== undefined && offsetS >= schedule.durationS) return undefined;
  const period = schedule.periods.filter((p) => p.startPeriodS <= offsetS).at(-1);
  if (!period) return undefined;
  return schedule.unit === 'A' ? period.limit : period.limit / (VOLTS * (period.numberPhases ?? 3));
}

/** A 1.6 SetChargingProfile's profile, as the stack keeps it. */
export function profileFrom16(p: SetChargingProfileRequest['csChargingProfiles']): ChargingProfile {
  return profileOf(p.chargingProfileId, p.chargingProfilePurpose, p, p.chargingSchedule);
}

/** A 2.0.1 SetChargingProfile's profile: its first schedule (the others are for ISO 15118 cars to choose from). */
export function profileFrom201(p: Ocpp201Actions['SetChargingProfile'][0]['chargingProfile']): ChargingProfile {
  const purpose = p.chargingProfilePurpose;
  const capOrOwn = purpose === 'TxProfile' || purpose === 'TxDefaultProfile' ? purpose : 'ChargePointMaxProfile';
  return profileOf(p.id, capOrOwn, p, p.chargingSchedule[0]);
}

/** What 1.6 and 2.0.1 profiles share, field for field. */
function profileOf(
  id: number,
  purpose: Purpose,
  p: {
    stackLevel: number;
    chargingProfileKind: ChargingProfile['kind'];
    recurrencyKind?: 'Daily' | 'Weekly';
    validFrom?: string;
    validTo?: string;
    transactionId?: number | string;
  },
  s: {
    startSchedule?: string;
    duration?: number;
    chargingRateUnit: 'A' | 'W';
    chargingSchedulePeriod: Array<{ startPeriod: number; limit: number; numberPhases?: number }>;
  },
): ChargingProfile {
  return {
    id,
    stackLevel: p.stackLevel,
    purpose,
    kind: p.chargingProfileKind,
    ...(p.recurrencyKind && { recurrency: p.recurrencyKind }),
    ...(p.validFrom && { validFrom: new Date(p.validFrom) }),
    ...(p.validTo && { validTo: new Date(p.validTo) }),
    ...(p.transactionId !== undefined && { transactionId: p.transactionId }),
    schedule: {
      ...(s.startSchedule && { startSchedule: new Date(s.startSchedule) }),
      ...(s.duration !== undefined && { durationS: s.duration }),
      unit: s.chargingRateUnit,
      periods: s.chargingSchedulePeriod
        .map((period) => ({
          startPeriodS: period.startPeriod,
          limit: period.limit,
          ...(period.numberPhases !== undefined && { numberPhases: period.numberPhases }),
        }))
        .sort((a, b) => a.startPeriodS - b.startPeriodS),
    },
  };
}
