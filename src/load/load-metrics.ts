import { Gauge, type Registry } from 'prom-client';
import type { LoadStatus } from './status-views.js';
import { PHASES } from './types.js';

const CONNECTOR_STATES = ['sharing', 'waiting', 'failsafe', 'uncontrolled', 'idle'] as const;

/**
 * The load controller's series (docs/configuration/circuits.md#circuits-load-management), read from its status at scrape time, so nothing
 * runs per step. Each gauge starts over at every scrape: a circuit or connector a reload removed is gone from the
 * next one, and nothing is shown while no site has circuits (`status` gives undefined).
 */
export function registerLoadMetrics(registry: Registry, status: () => LoadStatus | undefined): void {
  // One scrape collects every gauge in the same tick: the status is made once and shared.
  let snapshot: LoadStatus | undefined;
  let taken = false;
  const scrape = (): LoadStatus => {
    if (!taken) {
      snapshot = status();
      taken = true;
      queueMicrotask(() => {
        taken = false;
      });
    }
    return snapshot ?? { circuits: [], connectors: [] };
  };
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    fill: (set: (labels: Record<L, string>, value: number) => void, load: LoadStatus) => void,
  ): Gauge<L> =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        fill((labels, value) => this.set(labels, value), scrape());
      },
    });

  gauge(
    'chargegate_circuit_current_amperes',
    "Phase current the circuit's meter measured last; absent without a working meter",
    ['circuit', 'phase'],
    (set, { circuits }) => {
      for (const c of circuits)
        if (c.measuredA) for (const phase of PHASES) set({ circuit: c.circuitId, phase }, c.measuredA[phase]);
    },
  );
  gauge('chargegate_circuit_limit_amperes', 'The limit per phase that holds now', ['circuit'], (set, { circuits }) => {
    for (const c of circuits) set({ circuit: c.circuitId }, c.maxCurrentA);
  });
  gauge(
    'chargegate_circuit_headroom_amperes',
    'What the sharing connectors share: the limit minus the other load and the fail-safe allowances, most loaded phase',
    ['circuit'],
    (set, { circuits }) => {
      for (const c of circuits) set({ circuit: c.circuitId }, c.headroomA);
    },
  );
  gauge(
    'chargegate_circuit_other_amperes',
    'Load that is not a managed connector, per phase (without a meter: uncontrolled connectors at their maximum)',
    ['circuit', 'phase'],
    (set, { circuits }) => {
      for (const c of circuits) for (const phase of PHASES) set({ circuit: c.circuitId, phase }, c.otherA[phase]);
    },
  );
  gauge(
    'chargegate_circuit_meter_up',
    "1 while the circuit's meter gives readings, 0 once it is lost (the circuit is on the fail-safe); absent without one",
    ['circuit'],
    (set, { circuits }) => {
      for (const c of circuits) if (c.meter !== 'none') set({ circuit: c.circuitId }, c.meter === 'ok' ? 1 : 0);
    },
  );
  gauge(
    'chargegate_connector_allowed_amperes',
    'What a charging connector may draw per phase now; absent while it is idle',
    ['chargePoint', 'connector'],
    (set, { connectors }) => {
      for (const k of connectors)
        if (k.allowedA !== undefined)
          set({ chargePoint: k.chargePointId, connector: String(k.connectorId) }, k.allowedA);
    },
  );
  gauge(
    'chargegate_connector_drawn_amperes',
    "What a charging connector's car last reported drawing per phase; absent until it reports",
    ['chargePoint', 'connector'],
    (set, { connectors }) => {
      for (const k of connectors)
        if (k.drawnA !== undefined) set({ chargePoint: k.chargePointId, connector: String(k.connectorId) }, k.drawnA);
    },
  );
  gauge(
    'chargegate_connector_state',
    "1 for the connector's load management state now, 0 for the others: sharing, waiting, failsafe, uncontrolled, idle",
    ['chargePoint', 'connector', 'state'],
    (set, { connectors }) => {
      for (const k of connectors)
        for (const state of CONNECTOR_STATES)
          set({ chargePoint: k.chargePointId, connector: String(k.connectorId), state }, k.state === state ? 1 : 0);
    },
  );
}
