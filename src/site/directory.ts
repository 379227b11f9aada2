import { sessionMeters, type Config, type SessionMeterConfig } from '../config/index.js';

/** Where a connector sits: which site, station and charge point. */
export interface ChargePointRef {
  siteId: string;
  stationId: string;
  chargePointId: string;
}

/**
 * Answers "whose is this?" from the config. A station that is not in the config (paired from the CLI) has one
 * charge point named after the station, carrying every connector it reports.
 */
export class SiteDirectory {
  private readonly stationSite = new Map<string, string>();
  private readonly connectorChargePoint = new Map<string, string>();
  private readonly meters = new Map<string, { siteId: string; meter: SessionMeterConfig }>();
  private readonly chargePointStations = new Map<string, string[]>();
  private readonly stationChargePoints = new Map<string, string[]>();

  constructor(readonly config: Config) {
    for (const site of config.sites) {
      for (const station of site.stations) {
        this.stationSite.set(station.id, site.id);
        if (station.chargePoints.length > 0)
          this.stationChargePoints.set(
            station.id,
            station.chargePoints.map((cp) => cp.id),
          );
        for (const cp of station.chargePoints) {
          for (const c of cp.connectors) this.connectorChargePoint.set(`${station.id}\u0000${c}`, cp.id);
          this.addChargePointStation(cp.id, station.id);
        }
      }
      for (const meter of sessionMeters(site)) {
        this.meters.set(meter.id, { siteId: site.id, meter });
        this.addChargePointStation(meter.chargePointId, meter.id);
      }
    }
  }

  configuredStationIds(): string[] {
    return [...this.stationSite.keys()];
  }

  /** The site of a station listed in the config, or undefined. */
  configuredSiteOf(stationId: string): string | undefined {
    return this.stationSite.get(stationId);
  }

  chargePointOf(stationId: string, connectorId: number): string {
    return this.connectorChargePoint.get(`${stationId}\u0000${connectorId}`) ?? this.defaultChargePointOf(stationId);
  }

  /** False only for a connector that a station configured with charge points does not list. */
  hasConnector(stationId: string, connectorId: number): boolean {
    return (
      !this.stationChargePoints.has(stationId) || this.connectorChargePoint.has(`${stationId}\u0000${connectorId}`)
    );
  }

  /** Charge points of a configured station (or the one named after it), for station-wide (connector 0) status. */
  chargePointsOf(stationId: string): readonly string[] {
    return this.stationChargePoints.get(stationId) ?? [this.defaultChargePointOf(stationId)];
  }

  meter(meterId: string): { siteId: string; meter: SessionMeterConfig } | undefined {
    return this.meters.get(meterId);
  }

  /** The configured stations and meters a charge point id is listed under (usually one). */
  stationsOfChargePoint(chargePointId: string): readonly string[] {
    return this.chargePointStations.get(chargePointId) ?? [];
  }

  siteExists(siteId: string): boolean {
    return this.config.sites.some((s) => s.id === siteId);
  }

  private addChargePointStation(chargePointId: string, stationId: string): void {
    const stations = this.chargePointStations.get(chargePointId) ?? [];
    if (!stations.includes(stationId)) this.chargePointStations.set(chargePointId, [...stations, stationId]);
  }

  private defaultChargePointOf(stationId: string): string {
    return stationId;
  }
}
