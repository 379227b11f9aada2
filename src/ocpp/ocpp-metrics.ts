import { Counter, Gauge, type Registry } from 'prom-client';
import type { StationConnections } from './connections.js';

/**
 * The central system's metrics (README "Operating"): calls by action and outcome, and the stations connected.
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
