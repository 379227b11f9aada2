import type { ReportedDraw } from './draw-estimate.js';
import type { PhaseCurrents } from './types.js';

// What load management reads from the rest of the daemon: the circuit meters and the open transactions.

/** What a circuit meter last told: its phase currents, or that it went offline. */
export type CircuitMeterReport =
  { meterId: string; online: true; currentA: PhaseCurrents } | { meterId: string; online: false };

/** The circuit meters (modbus/ implements it). */
export interface CircuitMeters {
  circuitReadings(): readonly CircuitMeterReport[];
  /** Returns the unsubscribe. */
  onCircuitReading(listener: () => void): () => void;
}

/** A charging session as the domain keeps it (site/ implements the source). */
export interface OpenTransaction {
  id: number;
  stationId: string;
  chargePointId: string;
  connectorId: number;
  stationTransactionId: string | null;
  /** ISO 8601, as its station told it: a relative charging schedule counts from it. */
  startedAt: string;
}

export interface OpenTransactions {
  open(): readonly OpenTransaction[];
  /** The transaction's car's draw as its station last reported it (atMs on the clock's monotonic reading). */
  reportedDraw(transactionId: number): ReportedDraw | undefined;
  /**
   * Told, by transaction id, once a start or stop is committed and answered: a 1.6 station knows a transaction's id
   * only from that answer. Returns the unsubscribe.
   */
  onOpenedOrClosed(listener: (transactionId: number) => void): () => void;
}
