import type { OpenTransaction } from '../../src/load/index.js';

/** When the fixtures' transactions started (no CSMS schedule counts from it here). */
const STARTED_AT = new Date().toISOString();

/** A 1.6 transaction open on connector 1 of the station's charge point `<stationId>-A`, as the load manager reads it. */
export function openTransactionOn(id: number, stationId: string): OpenTransaction {
  return {
    id,
    stationId,
    chargePointId: `${stationId}-A`,
    connectorId: 1,
    stationTransactionId: null,
    startedAt: STARTED_AT,
  };
}
