import { Counter, Gauge, type Registry } from 'prom-client';
import type { StationConnections } from './connections.js';

/**
 * The central system's metrics (docs/operating/index.md#operating): calls by action and outcome, and the stations connected.
 * Returns what counts a handled call; without a registry it counts nothing.
 */
export function registerOcppMetrics(
  registry: Registry | undefined,
  connections: StationConnections,
): (action: string, outcome: string) => void {
  if (!registry) return () => undefined;
  const calls = new Counter({
    name: 'chargegate_ocpp_calls_total',
    help: 'Calls from stations by action and outcome (ok or the OCPP error code)',
    labelNames: ['action', 'outcome'],
    registers: [registry],
  });
  new Gauge({
    name: 'chargegate_ocpp_connected_stations',
    help: 'Stations with an open OCPP connection',
    registers: [registry],
    collect() {
      this.set(connections.size);
    },
  });
  return (action, outcome) => calls.inc({ action, outcome });
}

/** Why a station's lane did not get a call answered (call-lane.ts): too many CSMS calls waited, or a limit did. */
export type DroppedCall = 'queue_full' | 'given_up';

/** Counts the calls the stations' lanes refused or gave up (docs/operating/security.md#security); without a registry nothing. */
export function registerLaneMetrics(registry: Registry | undefined): (stationId: string, reason: DroppedCall) => void {
  if (!registry) return () => undefined;
  const dropped = new Counter({
    name: 'chargegate_ocpp_station_calls_dropped_total',
    help: 'Calls toward a station its lane refused (queue_full: too many CSMS calls waiting) or gave up (given_up: a load limit waited)',
    labelNames: ['station', 'reason'],
    registers: [registry],
  });
  return (station, reason) => dropped.inc({ station, reason });
}
