import type { Logger } from '../log/index.js';
import { TransactionStoppedError, UnknownConnectorError, type ActionMap, type CentralSystem } from '../ocpp/index.js';
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

/**
 * What chargegate does itself with some of the CSMS's calls of one OCPP version rather than relay them as they are, by
 * action, typed by the version's action map; `toStation` relays the call as it is.
 */
export type CsmsActions<Actions extends ActionMap<Actions>> = {
  [A in keyof Actions]?: (
    stationId: string,
    params: Actions[A][0],
    toStation: () => Promise<Actions[A][1]>,
  ) => Promise<Actions[A][1]>;
};

/** A call on to the station in its OCPP version, typed as the station commands' call16 and call201 are. */
export type StationRelay<Actions extends ActionMap<Actions>> = <A extends keyof Actions & string>(
  stationId: string,
  action: A,
  params: Actions[A][0],
) => Promise<Actions[A][1]>;

/**
 * A version's handler of the CSMS's calls: its own actions, the rest relayed. The one place a CSMS call's action and
 * params take their types, as typedCall is for a station's answers: ocpp-rpc's strict mode validated the call against
 * the schema of the link's version, which the action map was generated from.
 */
export function csmsCallsOf<Actions extends ActionMap<Actions>>(
  actions: CsmsActions<Actions>,
  relay: StationRelay<Actions>,
): CsmsCallHandler {
  const handle = <A extends keyof Actions & string>(stationId: string, action: A, params: Actions[A][0]) => {
    const toStation = () => relay(stationId, action, params);
    const own = actions[action];
    return own ? own(stationId, params, toStation) : toStation();
  };
  type Action = keyof Actions & string;
  return (stationId, action, params) => handle(stationId, action as Action, params as Actions[Action][0]);
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
