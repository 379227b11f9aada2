import { circuitMeterConfig } from '../modbus/harness.js';

/** How soon a lost circuit meter counts as lost in these fixtures. */
export const OFFLINE_AFTER_S = 2;

/**
 * Site `s1` as docs/configuration/circuits.md#circuits-load-management draws it, small: circuit `main` (40 A) measured by the circuit
 * meter `grid` (unit 1 of a Modbus TCP meter on `meterPort`) with CP001-A (16 A) on it, and below it `garage` (20 A,
 * no meter of its own) with CP002-A (10 A). Each station has one charge point `<station>-A` on connector 1.
 */
export function meteredCircuitSite(meterPort: number): Record<string, unknown> {
  return {
    id: 's1',
    stations: ['CP001', 'CP002'].map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] })),
    meters: [circuitMeterConfig('grid', 1, { type: 'tcp', host: '127.0.0.1', port: meterPort }, OFFLINE_AFTER_S)],
    webhooks: [],
    chargePoints: [
      { id: 'CP001-A', maxCurrentA: 16 },
      { id: 'CP002-A', maxCurrentA: 10 },
    ],
    circuits: [
      { id: 'main', maxCurrentA: 40, meter: 'grid', chargePoints: ['CP001-A'] },
      { id: 'garage', parent: 'main', maxCurrentA: 20, chargePoints: ['CP002-A'] },
    ],
  };
}

/** Quick raises, and OCPP calls that give up soon, so the tests see the controller settle within seconds. */
export const FAST_LOAD = {
  loadManagement: { minCurrentA: 6, raiseAfterS: 1, profileValidityS: 300 },
  ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: 500 },
};
