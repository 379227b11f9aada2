import { stationIdentity, type Site } from '../site/index.js';

/** What a station is, for `station list`, GET /stations and the status page (contract 11.1). */
export interface StationInventory {
  id: string;
  /** Its site; null for an unknown station not yet paired. */
  site: string | null;
  /** The OCPP subprotocol of its open connection (ocpp1.6, ocpp2.0.1); null while it is not connected. */
  protocol: string | null;
  connected: boolean;
  /** RFC 3339; null if it never connected. */
  lastSeen: string | null;
  vendor: string | null;
  model: string | null;
  serialNumber: string | null;
  firmwareVersion: string | null;
  connectors: Array<{ connectorId: number; chargePointId: string; status: string; errorCode: string }>;
  /** The firmware or log operation in progress (contract 11.2, 11.3); null while none is. */
  operation: LongOperation | null;
}

/** A firmware update or a log collection under way on a station: its kind, its rollout or log id, its state. */
export interface LongOperation {
  kind: 'firmware' | 'logs';
  id: string;
  state: string;
}

/** Where firmware rollouts and log collections tell which station they occupy now; null for a station they do not. */
export type LongOperationSource = (stationId: string) => LongOperation | null;

/** Whether each station is connected now, and with which protocol. */
export interface LiveConnections {
  protocolOf(stationId: string): string | undefined;
}

/**
 * The stations the site knows (from the config and the database, removed ones left out), each with what its last
 * BootNotification said (stored in 1.6's names for 2.0.1 stations too) and its connectors' last status.
 */
export function stationInventory(
  site: Site,
  live: LiveConnections,
  longOperations: readonly LongOperationSource[],
  only?: string,
): StationInventory[] {
  const listed = site.stations.list().filter((s) => only === undefined || s.id === only);
  if (listed.length === 0) return [];
  const chargePoints = site.connectors.chargePoints();
  return listed.map((station) => {
    const protocol = live.protocolOf(station.id) ?? null;
    const connectors = chargePoints
      .filter((cp) => cp.stationId === station.id)
      .flatMap((cp) =>
        cp.connectors.map(({ connectorId, status, errorCode }) => ({
          connectorId,
          chargePointId: cp.chargePointId,
          status,
          errorCode,
        })),
      )
      .sort((a, b) => a.connectorId - b.connectorId);
    return {
      id: station.id,
      site: station.siteId,
      protocol,
      connected: protocol !== null,
      lastSeen: station.lastSeen,
      ...stationIdentity(station.bootInfo),
      connectors,
      operation: longOperationOf(longOperations, station.id),
    };
  });
}

/** The firmware update or log collection the station is part of now, from the first source that has one. */
export function longOperationOf(sources: readonly LongOperationSource[], stationId: string): LongOperation | null {
  for (const source of sources) {
    const operation = source(stationId);
    if (operation) return operation;
  }
  return null;
}
