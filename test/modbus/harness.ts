import type { CircuitMeterHealth, MeterHealth, MetersReport } from '../../src/modbus/index.js';
import type { Database } from '../../src/store/index.js';
import { eventually, type EventRow } from '../support/daemon.js';

export { eventually };

/**
 * Detection scaled down so the suite stays fast: 1 s to start, 3 s of quiet to stop. Offline only after 10 s, so a
 * loaded machine's slow answers do not count as a meter dropping off (the drop-off scenario sets its own).
 */
export const FAST_DETECTION = { startCurrentA: 1, startDelayS: 1, stopCurrentA: 0.5, stopDelayS: 3, offlineAfterS: 10 };

/** IEEE 754 NaN as an SDM630 sends it in a float32 register, high word first. */
export const NAN_WORDS = [0x7fc0, 0x0000];

/** Pacing for tests: small delays, quick reconnects. */
export const FAST_BUS = {
  timeoutMs: 1000,
  interRequestDelayMs: 5,
  unitChangeDelayMs: 10,
  reconnectMinMs: 100,
  reconnectMaxMs: 400,
};

export type ConnectionConfig =
  | { type: 'tcp'; host: string; port: number }
  | { type: 'rtuovertcp'; host: string; port: number }
  | { type: 'rtu'; device: string; baudRate?: number };

/** A meter `m<unit>` on charge point `MB-<unit>` connector 1, polled every 200 ms. */
export function meterConfig(
  unitId: number,
  connection: ConnectionConfig,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    id: `m${unitId}`,
    chargePointId: `MB-${unitId}`,
    connectorId: 1,
    model: 'sdm630',
    connection: { ...connection, unitId, ...FAST_BUS },
    pollIntervalMs: 200,
    detection: FAST_DETECTION,
    ...extra,
  };
}

/** A `role: circuit` meter `id` at `unitId`, polled every 200 ms: no charge point, no detection but offlineAfterS. */
export function circuitMeterConfig(
  id: string,
  unitId: number,
  connection: ConnectionConfig,
  offlineAfterS = FAST_DETECTION.offlineAfterS,
): Record<string, unknown> {
  return {
    id,
    role: 'circuit',
    model: 'sdm630',
    connection: { ...connection, unitId, ...FAST_BUS },
    pollIntervalMs: 200,
    detection: { offlineAfterS },
  };
}

/** The outbox events one meter caused, oldest first. */
export function meterEvents(db: Database, meterId: string, eventType?: string): EventRow[] {
  const rows = db.prepare('SELECT event_type, site_id, payload FROM events ORDER BY seq').all() as Array<{
    event_type: string;
    site_id: string;
    payload: string;
  }>;
  return rows
    .map((r) => ({
      eventType: r.event_type,
      siteId: r.site_id,
      payload: JSON.parse(r.payload) as Record<string, unknown>,
    }))
    .filter((e) => e.payload.stationId === meterId && (eventType === undefined || e.eventType === eventType));
}

/** `status/errorCode` of each ChargePointStatus a meter caused. */
export function statusTrail(db: Database, meterId: string): string[] {
  return meterEvents(db, meterId, 'ChargePointStatus').map(
    (e) => `${String(e.payload.status)}/${String(e.payload.errorCode)}`,
  );
}

export function waitForEvent(
  db: Database,
  meterId: string,
  eventType: string,
  count = 1,
  timeoutMs = 20_000,
): Promise<EventRow> {
  return eventually(
    () => meterEvents(db, meterId, eventType)[count - 1],
    timeoutMs,
    `${eventType} #${count} of ${meterId}`,
  );
}

export function waitForStatus(
  db: Database,
  meterId: string,
  status: string,
  count = 1,
  timeoutMs = 20_000,
): Promise<true> {
  return eventually(
    () => statusTrail(db, meterId).filter((s) => s.startsWith(`${status}/`)).length >= count,
    timeoutMs,
    `status ${status} #${count} of ${meterId}`,
  );
}

/** The daemon's GET /health report of one meter: a session meter's unless the caller names the circuit kind. */
export async function meterHealth<H extends MeterHealth | CircuitMeterHealth = MeterHealth>(
  httpPort: number,
  meterId: string,
): Promise<H | undefined> {
  const response = await fetch(`http://127.0.0.1:${httpPort}/health`);
  const body = (await response.json()) as { meters?: MetersReport };
  return body.meters?.meters[meterId] as H | undefined;
}

/** Delivery rows of the outbox for a meter's events: one per event and subscribed webhook. */
export function deliveriesOf(db: Database, meterId: string): Array<{ eventType: string; webhookId: string }> {
  const rows = db
    .prepare(
      'SELECT d.event_type, d.webhook_id, e.payload FROM deliveries d JOIN events e ON e.seq = d.event_seq ORDER BY d.id',
    )
    .all() as Array<{
    event_type: string;
    webhook_id: string;
    payload: string;
  }>;
  return rows
    .filter((r) => (JSON.parse(r.payload) as { stationId?: string }).stationId === meterId)
    .map((r) => ({ eventType: r.event_type, webhookId: r.webhook_id }));
}
