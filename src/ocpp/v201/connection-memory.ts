import { BoundedMap } from '../bounded-map.js';
import type { ConnectorActivity } from './mapping.js';

/** What a connection remembers per EVSE and per open transaction, at most: a station has a handful of each. */
const REMEMBERED_PER_CONNECTION = 64;

/**
 * What a 2.0.1 connection remembers between calls, and only for the connection's life (what must survive a
 * reconnect is in the domain): per EVSE what its connector and transaction are doing (the 1.6 status is made of
 * both) and its last energy reading; per transaction the EVSE it is on (later events need not name it).
 * Bounded whatever ids a station makes up.
 */
export class ConnectionMemory {
  private readonly activity = new BoundedMap<number, ConnectorActivity>(REMEMBERED_PER_CONNECTION);
  private readonly evseOfTransaction = new BoundedMap<string, number>(REMEMBERED_PER_CONNECTION);
  private readonly energyWh = new BoundedMap<number, number>(REMEMBERED_PER_CONNECTION);

  /** The EVSE's activity with `change` applied, remembered; an EVSE not heard of yet is taken as Occupied. */
  changeActivity(evseId: number, change: Partial<ConnectorActivity>): ConnectorActivity {
    const next = { ...(this.activity.get(evseId) ?? { connectorStatus: 'Occupied' as const }), ...change };
    this.activity.set(evseId, next);
    return next;
  }

  activityOf(evseId: number): ConnectorActivity | undefined {
    return this.activity.get(evseId);
  }

  evseOf(stationTransactionId: string): number | undefined {
    return this.evseOfTransaction.get(stationTransactionId);
  }

  placeTransaction(stationTransactionId: string, evseId: number): void {
    this.evseOfTransaction.set(stationTransactionId, evseId);
  }

  forgetTransaction(stationTransactionId: string): void {
    this.evseOfTransaction.delete(stationTransactionId);
  }

  /** The EVSE's last energy register reading (Wh), if a call carried one. */
  energyOf(evseId: number): number | undefined {
    return this.energyWh.get(evseId);
  }

  noteEnergy(evseId: number, energyWh: number | undefined): void {
    if (energyWh !== undefined) this.energyWh.set(evseId, energyWh);
  }
}
