import { CHARGE_POINT_DEFAULTS, type Config } from '../config/index.js';
import type { ConnectorFacts, LoadSite } from './types.js';

/**
 * The config's circuits as the load controller sees them (pure): its site, and where each of its connectors and
 * meters is. A connector is known to the controller by its connector key, `<chargePointId>/<connectorId>` (an OCPP
 * station's connector, or a Modbus session meter's); connectorId alone is the OCPP number.
 */

/** A managed OCPP connector: where its limits go. */
export interface StationConnector {
  stationId: string;
  connectorId: number;
  phases: 1 | 3;
  failsafeA: number;
}

/** Where a controller's connector is, as shown (status, the API, the metrics). */
export interface ConnectorAddress {
  siteId: string;
  chargePointId: string;
  connectorId: number;
}

export interface ProjectedSite {
  site: LoadSite;
  /** The managed OCPP connectors, by connector key. */
  stations: ReadonlyMap<string, StationConnector>;
  /** The circuit each `role: circuit` meter measures, by meter id. */
  circuitOfMeter: ReadonlyMap<string, string>;
  /** Per circuit id: its site and meter. */
  circuitPlaces: ReadonlyMap<string, { siteId: string; meterId?: string }>;
  /** By connector key. */
  addresses: ReadonlyMap<string, ConnectorAddress>;
}

/** A connector's key in the controller: a charge point's connector (an OCPP station's, or a Modbus meter's). */
export function connectorKeyOf(chargePointId: string, connectorId: number): string {
  return `${chargePointId}/${connectorId}`;
}

/** Whether any site has circuits: only then is load management started. */
export function hasCircuits(config: Config): boolean {
  return config.sites.some((s) => s.circuits.length > 0);
}

/** The managed connectors of a station, by connector key. */
export function connectorsOfStation(
  projected: ProjectedSite,
  stationId: string,
): Array<[connectorKey: string, StationConnector]> {
  return [...projected.stations].filter(([, c]) => c.stationId === stationId);
}

/**
 * The config's circuits and the connectors of the charge points on them, as the controller's site. Connectors in
 * `uncontrolled` (their station refuses profiles) are not controllable.
 */
export function projectSite(config: Config, uncontrolled: ReadonlySet<string>): ProjectedSite {
  const circuits: LoadSite['circuits'][number][] = [];
  const connectors: ConnectorFacts[] = [];
  const stations = new Map<string, StationConnector>();
  const circuitOfMeter = new Map<string, string>();
  const circuitPlaces = new Map<string, { siteId: string; meterId?: string }>();
  const addresses = new Map<string, ConnectorAddress>();
  for (const s of config.sites) {
    for (const c of s.circuits) {
      circuitPlaces.set(c.id, { siteId: s.id, ...(c.meter !== undefined && { meterId: c.meter }) });
      circuits.push({
        id: c.id,
        ...(c.parent !== undefined && { parent: c.parent }),
        maxCurrentA: c.maxCurrentA,
        ...(c.maxPowerW !== undefined && { maxPowerW: c.maxPowerW }),
        failsafeCurrentA: c.failsafeCurrentA,
        metered: c.meter !== undefined,
      });
      if (c.meter !== undefined) circuitOfMeter.set(c.meter, c.id);
      for (const chargePointId of c.chargePoints) {
        const facts = s.chargePoints.find((cp) => cp.id === chargePointId) ?? { ...CHARGE_POINT_DEFAULTS };
        const phasing =
          facts.phases === 1 && facts.phase ? { phases: 1 as const, phase: facts.phase } : { phases: 3 as const };
        const connector = (connectorId: number, controllable: boolean): ConnectorFacts => {
          const key = connectorKeyOf(chargePointId, connectorId);
          addresses.set(key, { siteId: s.id, chargePointId, connectorId });
          return {
            id: key,
            circuitId: c.id,
            maxCurrentA: facts.maxCurrentA,
            controllable: controllable && !uncontrolled.has(key),
            ...phasing,
          };
        };
        for (const station of s.stations)
          for (const cp of station.chargePoints.filter((p) => p.id === chargePointId))
            for (const connectorId of cp.connectors) {
              connectors.push(connector(connectorId, true));
              stations.set(connectorKeyOf(chargePointId, connectorId), {
                stationId: station.id,
                connectorId,
                phases: phasing.phases,
                failsafeA: c.failsafeCurrentA,
              });
            }
        // A Modbus-only charger: its meter detects sessions, nothing limits it.
        for (const meter of s.meters)
          if (meter.role === 'session' && meter.chargePointId === chargePointId)
            connectors.push(connector(meter.connectorId, false));
      }
    }
  }
  const { minCurrentA, raiseAfterS } = config.loadManagement;
  return {
    site: { circuits, connectors, settings: { minCurrentA, raiseAfterS } },
    stations,
    circuitOfMeter,
    circuitPlaces,
    addresses,
  };
}
