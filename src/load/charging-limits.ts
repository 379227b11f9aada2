import type { ConnectorPlace, Steps, Window } from './schedules.js';

/**
 * How the controller's shell reaches stations: the OCPP edge implements this with charging profiles, so `load/` names
 * no protocol (CONTRIBUTING.md#working-on-chargegate, Layout). Every call resolves to what became of the limit; a station's
 * answer never throws.
 */
export interface ChargingLimits {
  /**
   * The fail-safe every connector of the station falls back to (a TxDefaultProfile for the whole station), from now
   * on; where it changes (the operator's CSMS's schedule, docs/design/uplink.md#uplink-what-the-csms-sees), each step afterS seconds from
   * `from`, the last one holding.
   */
  setFailsafe(stationId: string, currentA: number, changes?: TransactionLimit['changes']): Promise<LimitOutcome>;
  /** A limit on a running transaction until `validTo` (a TxProfile); renewing it replaces the previous one. */
  setTransactionLimit(stationId: string, limit: TransactionLimit): Promise<LimitOutcome>;
  /**
   * Asks the station to report what the car on a connector draws now (MeterValues with Current.Import), as it does
   * after a raise: accepted means the report follows.
   */
  requestDrawReport(stationId: string, connectorId: number): Promise<LimitOutcome>;
}

/**
 * rejected and notSupported: the station will not do it (a limit: shown as uncontrolled); offline: not connected;
 * timeout: no answer in time (the limit may or may not hold).
 */
export type LimitOutcome = 'accepted' | 'rejected' | 'notSupported' | 'offline' | 'timeout';

export interface TransactionLimit {
  connectorId: number;
  /** chargegate's transaction id. */
  transactionId: number;
  /** The id a 2.0.1 station gave the transaction; null for 1.6. */
  stationTransactionId: string | null;
  /** Per phase. */
  currentA: number;
  /** When the limit lapses, so that a station that lost chargegate falls back to its fail-safe by itself. */
  validTo: Date;
  /** The phases the connector may use, when known. */
  phases?: 1 | 3;
  /**
   * Where the limit changes before validTo (the operator's CSMS's schedule, docs/design/uplink.md#uplink-what-the-csms-sees): each step
   * afterS seconds from `from`; currentA holds until the first.
   */
  changes?: { from: Date; steps: ReadonlyArray<{ afterS: number; currentA: number }> };
}

/**
 * The operator's CSMS's charging profiles, which the uplink keeps (docs/design/uplink.md#uplink-what-the-csms-sees): what they allow a
 * connector, stacked, over a window; load management sends each connector the lower of that and its own limit.
 */
export interface CsmsSchedules {
  scheduleOf(stationId: string, place: ConnectorPlace, window: Window): Steps;
  /** Told once a change to a station's profiles is durable. Returns the unsubscribe. */
  onChange(listener: (stationId: string) => void): () => void;
}
