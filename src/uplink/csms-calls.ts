import type { Logger } from '../log/index.js';
import {
  OCPP201,
  TransactionStoppedError,
  UnknownConnectorError,
  type CentralSystem,
  type Ocpp16Actions,
  type Ocpp201Actions,
} from '../ocpp/index.js';
import type { Site } from '../site/index.js';
import type { LocalListSync } from './local-list-sync.js';

/** A call from the CSMS for one station, its transaction ids already chargegate's; resolves with the answer. */
export type CsmsCallHandler = (stationId: string, action: string, params: unknown) => Promise<unknown>;

/** What a handler of the CSMS's calls works with (v16/csms-calls.ts, v201/csms-calls.ts). */
export interface CsmsCallContext {
  central: CentralSystem;
  site: Site;
  localLists: LocalListSync;
  log: Logger;
}

/** A CSMS call passed to the station as it is, in the station's OCPP version: the station's answer is the CSMS's. */
export function relayIn(central: CentralSystem, protocol: string): CsmsCallHandler {
  return protocol === OCPP201
    ? (stationId, action, params) =>
        central.commands.call201(stationId, action as keyof Ocpp201Actions & string, params as never)
    : (stationId, action, params) =>
        central.commands.call16(stationId, action as keyof Ocpp16Actions & string, params as never);
}

/** Who the domain's remote start and stop are for, logged with them. */
export const CSMS = { by: 'csms' } as const;

/**
 * A remote start or stop chargegate refuses before the station hears of it (the API's 400 and 409): Rejected, as a
 * station would say. Any other failure is the caller's.
 */
export function refusedBy(log: Logger) {
  return (err: unknown, action: string, stationId: string): { status: 'Rejected' } => {
    if (!(err instanceof UnknownConnectorError || err instanceof TransactionStoppedError)) throw err;
    log.warn({ stationId, action, reason: err.message }, 'CSMS command refused: answered Rejected');
    return { status: 'Rejected' };
  };
}
