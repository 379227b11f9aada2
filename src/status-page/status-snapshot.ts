import { modbusBusKey, sessionMeters, type Config } from '../config/index.js';
import { worstLevel, type HealthLevel, type HealthSource } from '../health/index.js';
import type { LoadStatus } from '../load/index.js';
import type { MeterHealth } from '../modbus/index.js';
import type { LongOperation, OperationInProgress } from '../stations/index.js';
import { stationIdentity, whToKWh, type ChargePointView, type Site } from '../site/index.js';

/** GET /status.json: what the status page shows. Read-only and unauthenticated, so it carries no tag, secret or key. */
export interface StatusSnapshot {
  generatedAt: string;
  startedAt: string;
  version: string;
  company: string;
  sites: string[];
  health: HealthLevel;
  stations: StationStatus[];
  chargePoints: ChargePointView[];
  openTransactions: OpenTransactionStatus[];
  meters: MeterStatus[];
  /** Load management's circuits and managed connectors (docs/configuration/circuits.md#circuits-load-management); null without circuits. */
  load: LoadStatus | null;
  /** The health reports of the parts (ocpp, webhooks, meters...), as GET /health has them. */
  parts: Record<string, Record<string, unknown>>;
}

export interface StationStatus {
  stationId: string;
  siteId: string | null;
  state: string;
  online: boolean;
  lastSeen: string | null;
  vendor: string | null;
  model: string | null;
  firmwareVersion: string | null;
  /** The operation the station is being sent or answering now (a reset from the CLI, say); null when none is. */
  operation: OperationInProgress | null;
  /** The firmware rollout or log collection it is part of (contract 11.1's `operation`); null when none. */
  longOperation: LongOperation | null;
}

/** An open transaction without its idTag. */
export interface OpenTransactionStatus {
  transactionId: number;
  siteId: string;
  stationId: string;
  chargePointId: string;
  connectorId: number;
  startedAt: string;
  meterStartKWh: number;
  source: 'ocpp' | 'modbus';
}

export interface MeterStatus {
  meterId: string;
  siteId: string;
  chargePointId: string;
  connectorId: number;
  model: string;
  /** tcp://host:port#unit, rtu:/dev/ttyUSB0#unit... */
  address: string;
  /** What the poller last saw; null before its first poll. */
  live: MeterLive | null;
}

export interface MeterLive {
  status: HealthLevel;
  online: boolean;
  lastGoodReadingAt: string | null;
  energyKWh: number | null;
  currentA: number[];
  powerW: number | null;
  /** Detector phase: idle, starting, charging, stopping. */
  session: string;
  transactionId: number | null;
}

export interface StatusSnapshotSources {
  site: Site;
  config: () => Config;
  /** The parts' health reports; the `meters` one (MetersReport) also gives each meter's live view. */
  health: () => HealthSource[];
  /** What load management does now; undefined while no site has circuits. */
  load: () => LoadStatus | undefined;
  startedAt: Date;
  version: string;
  /** What runs on a station now (StationOperations.inProgress); none without it. */
  operationOf?: (stationId: string) => OperationInProgress | undefined;
  /** The firmware update or log collection a station is part of (StationOperations.longOperationOf). */
  longOperationOf?: (stationId: string) => LongOperation | null;
  now?: () => Date;
}

/** Keys a part's health report might carry that the page must never show, at any depth. */
const HIDDEN_KEY = /idtag|id_tag|password|secret|token|passphrase|authorization|private/i;

export function statusSnapshot(sources: StatusSnapshotSources): StatusSnapshot {
  const config = sources.config();
  const raw = sources.health().map((s) => [s.name, s.report()] as const);
  const meterHealth = meterHealthOf(raw.find(([name]) => name === 'meters')?.[1]);
  const reports = Object.fromEntries(
    raw.map(([name, report]) => [name, hideSecrets(report) as Record<string, unknown>]),
  );
  return {
    generatedAt: (sources.now?.() ?? new Date()).toISOString(),
    startedAt: sources.startedAt.toISOString(),
    version: sources.version,
    company: config.company.id,
    sites: config.sites.map((s) => s.id),
    health: worstLevel(Object.values(reports).map((r) => r.status as HealthLevel)),
    stations: sources.site.stations.list().map((s) => {
      const { vendor, model, firmwareVersion } = stationIdentity(s.bootInfo);
      return {
        stationId: s.id,
        siteId: s.siteId,
        state: s.state,
        online: s.online,
        lastSeen: s.lastSeen,
        vendor,
        model,
        firmwareVersion,
        operation: sources.operationOf?.(s.id) ?? null,
        longOperation: sources.longOperationOf?.(s.id) ?? null,
      };
    }),
    chargePoints: sources.site.connectors.chargePoints(),
    openTransactions: sources.site.transactions.open().map((t) => ({
      transactionId: t.id,
      siteId: t.siteId,
      stationId: t.stationId,
      chargePointId: t.chargePointId,
      connectorId: t.connectorId,
      startedAt: t.startedAt,
      meterStartKWh: whToKWh(t.meterStartWh),
      source: t.source,
    })),
    meters: config.sites.flatMap((site) =>
      sessionMeters(site).map((m) => ({
        meterId: m.id,
        siteId: site.id,
        chargePointId: m.chargePointId,
        connectorId: m.connectorId,
        model: m.model,
        address: `${modbusBusKey(m.connection)}#${m.connection.unitId}`,
        live: meterLive(meterHealth[m.id]),
      })),
    ),
    load: sources.load() ?? null,
    parts: reports,
  };
}

/** The poller's view per meter id, from the `meters` health report (MeterService.report()). */
function meterHealthOf(report: Record<string, unknown> | undefined): Record<string, MeterHealth> {
  const meters = report?.meters;
  return meters !== null && typeof meters === 'object' ? (meters as Record<string, MeterHealth>) : {};
}

function meterLive(health: MeterHealth | undefined): MeterLive | null {
  if (!health) return null;
  return {
    status: health.status,
    online: health.online,
    lastGoodReadingAt: health.lastGoodReadingAt ?? null,
    energyKWh: health.lastReading?.energyKWh ?? null,
    currentA: health.lastReading?.currentA ?? [],
    powerW: health.lastReading?.powerW ?? null,
    session: health.session.phase,
    transactionId: health.session.transactionId ?? null,
  };
}

function hideSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hideSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !HIDDEN_KEY.test(key))
      .map(([key, v]) => [key, hideSecrets(v)]),
  );
}
