import { sessionMeters } from '../config/index.js';
import { statement } from '../store/index.js';
import type { ChargePointRef } from './directory.js';
import type { ChargePointStatusPayload } from './events.js';
import type { SiteContext } from './site-context.js';
import type { StationRegistry } from './station-registry.js';
import { allStations, findStation } from './stations.js';

/** A connector anywhere on the site: an OCPP station's connector or a Modbus meter's charge point. */
export interface ConnectorRef extends ChargePointRef {
  connectorId: number;
}

/** A connector status written in the same commit as a session change (Modbus sessions: Charging / Available). */
export interface ConnectorStatusChange {
  status: string;
  errorCode: string;
}

export interface ConnectorState {
  connectorId: number;
  status: string;
  errorCode: string;
  transactionId?: number;
}

export interface ChargePointView {
  chargePointId: string;
  stationId: string;
  siteId: string;
  online: boolean;
  connectors: ConnectorState[];
}

interface ConnectorRow {
  stationId: string;
  connectorId: number;
  chargePointId: string;
  status: string;
  errorCode: string;
}

/**
 * Connectors and the charge points they make up: where a station's connector sits, its last status (a change
 * emits ChargePointStatus, a repeat writes nothing), and the views the API and the status page show.
 */
export class Connectors {
  constructor(
    private readonly ctx: SiteContext,
    private readonly stations: StationRegistry,
  ) {}

  /**
   * For a connector of a configured station that the config does not list, what the installer should add; undefined
   * when the connector is known (or the station is not in the config: it gets one charge point named after it).
   * Events from such a connector would name a charge point nobody configured.
   */
  unconfigured(stationId: string, connectorId: number): string | undefined {
    if (connectorId === 0 || this.ctx.directory.hasConnector(stationId, connectorId)) return undefined;
    return `add connector ${connectorId} to a chargePoints entry of station ${stationId} (site ${this.stations.siteOf(stationId)}) in the config`;
  }

  /** Where an OCPP station's connector sits. */
  locate(stationId: string, connectorId: number): ConnectorRef {
    return {
      siteId: this.stations.siteOf(stationId),
      stationId,
      chargePointId: this.ctx.directory.chargePointOf(stationId, connectorId),
      connectorId,
    };
  }

  /** StatusNotification from a station. Connector 0 is the whole station: one event per charge point. */
  recordStationStatus(stationId: string, connectorId: number, status: string, errorCode: string, info?: object): void {
    const siteId = this.stations.siteOf(stationId);
    const { directory } = this.ctx;
    const refs =
      connectorId === 0
        ? directory
            .chargePointsOf(stationId)
            .map((chargePointId) => ({ siteId, stationId, chargePointId, connectorId: 0 }))
        : [{ siteId, stationId, chargePointId: directory.chargePointOf(stationId, connectorId), connectorId }];
    this.ctx.commit(() => {
      // Connector 0 is one row per station (the primary key), shared by its charge points: compare it once,
      // before the first of them overwrites it, or every repeat would look like a change.
      const previous =
        connectorId === 0
          ? statement<[string], { status: string; errorCode: string }>(
              this.ctx.db,
              'SELECT status, error_code AS errorCode FROM connectors WHERE station_id = ? AND connector_id = 0',
            ).get(stationId)
          : undefined;
      const quiet = previous?.status === status && previous.errorCode === errorCode;
      for (const ref of refs) this.write(ref, status, errorCode, info, quiet);
    });
  }

  /**
   * Status of any connector (Modbus meters use this). Emits ChargePointStatus only when status or errorCode changed.
   */
  recordStatus(at: ConnectorRef, status: string, errorCode: string, info?: object): void {
    this.ctx.commit(() => this.write(at, status, errorCode, info));
  }

  /** Writes a status inside the caller's commit (a session change and the status it causes are one commit). */
  write(at: ConnectorRef, status: string, errorCode: string, info?: object, quiet = false): void {
    const { db } = this.ctx;
    const previous = statement<[string, number, string], { status: string; errorCode: string; info: string | null }>(
      db,
      'SELECT status, error_code AS errorCode, info FROM connectors WHERE station_id = ? AND connector_id = ? AND charge_point_id = ?',
    ).get(at.stationId, at.connectorId, at.chargePointId);
    const infoJson = info ? JSON.stringify(info) : null;
    const unchanged = previous?.status === status && previous.errorCode === errorCode;
    // Stations repeat their status often (at boot, on TriggerMessage, some every few minutes): a repeat writes
    // nothing, so it costs no fsync, and updated_at stays the time the status last changed.
    if (unchanged && previous.info === infoJson) return;
    const now = this.ctx.now();
    statement(
      db,
      `INSERT INTO connectors (station_id, connector_id, charge_point_id, status, error_code, info, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (station_id, connector_id) DO UPDATE SET charge_point_id = excluded.charge_point_id, status = excluded.status, error_code = excluded.error_code, info = excluded.info, updated_at = excluded.updated_at`,
    ).run(at.stationId, at.connectorId, at.chargePointId, status, errorCode, infoJson, now.toISOString());
    if (quiet || unchanged) return;
    const payload: ChargePointStatusPayload = {
      stationId: at.stationId,
      chargePointId: at.chargePointId,
      connectorId: at.connectorId,
      status,
      errorCode,
    };
    this.ctx.emit({ eventType: 'ChargePointStatus', siteId: at.siteId, payload }, now);
  }

  /** The last status a station reported for each of its connectors (0 too), as it reported it. */
  reported(stationId: string): Array<Omit<ConnectorState, 'transactionId'>> {
    return statement<[string], Omit<ConnectorState, 'transactionId'>>(
      this.ctx.db,
      'SELECT connector_id AS connectorId, status, error_code AS errorCode FROM connectors WHERE station_id = ? ORDER BY connector_id',
    ).all(stationId);
  }

  /** Charge points with their connectors' last known state, for the API and the status page. */
  chargePoints(): ChargePointView[] {
    return this.views();
  }

  /** One charge point as chargePoints() shows it, reading only the stations it is on (an API command's lookup). */
  chargePoint(chargePointId: string): ChargePointView | undefined {
    const reported = statement<[string], { stationId: string }>(
      this.ctx.db,
      'SELECT DISTINCT station_id AS stationId FROM connectors WHERE charge_point_id = ?',
    ).all(chargePointId);
    const stationIds = new Set([
      ...this.ctx.directory.stationsOfChargePoint(chargePointId),
      ...reported.map((r) => r.stationId),
    ]);
    return stationIds.size === 0 ? undefined : this.views(stationIds).find((v) => v.chargePointId === chargePointId);
  }

  /** The views of every charge point, or of those on the given stations (and meters). */
  private views(only?: ReadonlySet<string>): ChargePointView[] {
    const { db } = this.ctx;
    const inStations = only ? 'station_id IN (SELECT value FROM json_each(?))' : '1';
    const stationParams = only ? [JSON.stringify([...only])] : [];
    const connectorRows = statement<string[], ConnectorRow>(
      db,
      `SELECT station_id AS stationId, connector_id AS connectorId, charge_point_id AS chargePointId, status, error_code AS errorCode
         FROM connectors WHERE ${inStations} ORDER BY station_id, connector_id`,
    ).all(...stationParams);
    const key = (stationId: string, connectorId: number) => `${stationId}\u0000${connectorId}`;
    const rowOf = new Map(connectorRows.map((r) => [key(r.stationId, r.connectorId), r]));
    const openTransactions = statement<string[], { id: number; stationId: string; connectorId: number }>(
      db,
      `SELECT id, station_id AS stationId, connector_id AS connectorId FROM transactions WHERE stopped_at IS NULL AND ${inStations}`,
    ).all(...stationParams);
    const open = new Map<string, number>(openTransactions.map((t) => [key(t.stationId, t.connectorId), t.id]));
    const stationRows = only ? [...only].flatMap((id) => findStation(db, id) ?? []) : allStations(db);
    const online = new Set(stationRows.filter((s) => s.online).map((s) => s.id));
    const views = new Map<string, ChargePointView>();
    const view = (chargePointId: string, stationId: string, siteId: string, isOnline: boolean): ChargePointView => {
      let v = views.get(chargePointId);
      if (!v) views.set(chargePointId, (v = { chargePointId, stationId, siteId, online: isOnline, connectors: [] }));
      return v;
    };
    const connector = (v: ChargePointView, connectorId: number): void => {
      if (v.connectors.some((c) => c.connectorId === connectorId)) return;
      const row = rowOf.get(key(v.stationId, connectorId));
      const transactionId = open.get(key(v.stationId, connectorId));
      v.connectors.push({
        connectorId,
        status: row?.status ?? 'Unavailable',
        errorCode: row?.errorCode ?? 'NoError',
        ...(transactionId !== undefined && { transactionId }),
      });
    };
    const config = this.ctx.config();
    for (const site of config.sites) {
      for (const station of site.stations) {
        if (only && !only.has(station.id)) continue;
        for (const cp of station.chargePoints)
          for (const c of cp.connectors) connector(view(cp.id, station.id, site.id, online.has(station.id)), c);
      }
      for (const meter of sessionMeters(site)) {
        if (only && !only.has(meter.id)) continue;
        // A meter that stops answering reports PowerMeterFailure (src/modbus): its charge point shows offline.
        const healthy = rowOf.get(key(meter.id, meter.connectorId))?.errorCode !== 'PowerMeterFailure';
        connector(view(meter.chargePointId, meter.id, site.id, healthy), meter.connectorId);
      }
    }
    const meterIds = new Set(config.sites.flatMap((s) => s.meters.map((m) => m.id)));
    for (const row of connectorRows) {
      if (row.connectorId === 0 || meterIds.has(row.stationId)) continue;
      const admission = this.stations.admission(row.stationId);
      if (admission.verdict !== 'known') continue;
      connector(view(row.chargePointId, row.stationId, admission.siteId, online.has(row.stationId)), row.connectorId);
    }
    for (const v of views.values()) v.connectors.sort((a, b) => a.connectorId - b.connectorId);
    return [...views.values()].sort((a, b) => a.chargePointId.localeCompare(b.chargePointId));
  }
}
