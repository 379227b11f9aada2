import type { Logger } from '../log/index.js';
import { summarisedWarn } from '../log/index.js';
import type { StationHandlerDeps } from './call-handling.js';
import type { StationClient, StationConnections } from './connections.js';
import { OCPP201, type RpcErrorLike } from './rpc.js';
import { isAdmitted } from './station-access.js';
import { registerV16Handlers } from './v16/handlers.js';
import { registerV201Handlers } from './v201/handlers.js';

/** A station that repeats one mistake has it logged this often a minute, the rest counted (docs/operating/security.md#security). */
const STATION_WARNINGS = { perInterval: 10, intervalMs: 60_000 };

/** What every station connection shares: the handlers' dependencies but the per-station logger and warnings. */
export type SharedHandlerDeps = Omit<StationHandlerDeps, 'logger' | 'warn'>;

/**
 * A station's accepted connection, from open to close: it replaces the station's previous one, is marked online,
 * gets its protocol version's handlers and a logger of its own, and is marked offline once it closes.
 */
export function openStationConnection(
  client: StationClient,
  options: {
    connections: StationConnections;
    log: Logger;
    deps: SharedHandlerDeps;
    connectionChanged?: (change: { stationId: string; connected: boolean; protocol: string | undefined }) => void;
  },
): void {
  const { connections, deps } = options;
  const { site, config } = deps;
  const { stationId, admission } = client.session;
  const counted = isAdmitted(admission, config().ocpp.acceptUnknownStations);
  const log = options.log.child({ stationId, siteId: counted ? site.stations.siteOf(stationId) : undefined });
  /** Runs in socket event handlers: a database error is logged, never thrown into ocpp-rpc's emitter. */
  const markOnline = (online: boolean): void => {
    try {
      site.stations.setOnline(stationId, online);
    } catch (err) {
      log.error({ err, online }, 'could not record the station online state');
    }
  };
  const previous = connections.attach(client);
  if (previous) {
    log.info('station reconnected: closing its previous connection');
    void previous.close({ code: 1000, reason: 'replaced by a new connection' });
  }
  markOnline(true);
  const warn = summarisedWarn(log, STATION_WARNINGS);
  if (client.protocol === OCPP201) registerV201Handlers(client, { ...deps, logger: log, warn });
  else registerV16Handlers(client, { ...deps, logger: log, warn });
  const schema = client.protocol === OCPP201 ? 'OCPP 2.0.1' : 'OCPP 1.6';
  client.on('badMessage', ({ error, response }) => {
    // ocpp-rpc answers nothing to a CALLRESULT or CALLERROR; one whose id it no longer knows is an answer after the
    // call was given up (call-lane.ts) or timed out, not a broken frame.
    const { msgId } = ((error as Partial<RpcErrorLike>).details ?? {}) as { msgId?: unknown };
    if (response === null && typeof msgId === 'string')
      warn({ messageId: msgId }, 'answer to a call no longer waited for (given up or timed out)');
    else warn({ error: error.message, answered: response?.[2] }, 'malformed frame from station');
  });
  client.on('strictValidationFailure', ({ method, error, outbound, isCall }) => {
    if (outbound)
      log.error(
        { action: method, error: error.message, isCall },
        `our own message failed the ${schema} schema; not sent`,
      );
    else warn({ action: method, error: error.message }, `station message failed the ${schema} schema`);
  });
  client.once('close', ({ code, reason }) => {
    if (connections.detach(client)) {
      markOnline(false);
      options.connectionChanged?.({ stationId, connected: false, protocol: client.protocol });
    }
    warn.flush();
    log.info({ code, reason }, 'station disconnected');
  });
  log.info(
    {
      remoteAddress: client.handshake.remoteAddress,
      protocol: client.protocol,
      admission,
      securityProfile: config().ocpp.securityProfile,
    },
    'station connected',
  );
  options.connectionChanged?.({ stationId, connected: true, protocol: client.protocol });
}
