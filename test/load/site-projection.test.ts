import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { connectorsOfStation, projectSite } from '../../src/load/site-projection.js';

/** docs/configuration/circuits.md#circuits-load-management's example, a Modbus charge point and a second site beside it. */
const config = parseConfig(`sites:
  - id: brussels-1
    stations:
      - id: CP001
        chargePoints: [{ id: CP001-A, connectors: [1] }, { id: CP001-B, connectors: [2] }]
      - id: CP003
        chargePoints: [{ id: CP003-A, connectors: [1] }]
    meters:
      - { id: grid, role: circuit, model: sdm630, connection: { type: tcp, host: 10.0.0.5, port: 502, unitId: 1 } }
      - { id: meter-1, chargePointId: MB-1, connectorId: 1, model: sdm120, connection: { type: tcp, host: 10.0.0.5, port: 502, unitId: 2 } }
    chargePoints:
      - { id: CP001-A, maxCurrentA: 32, phases: 3 }
      - { id: MB-1, maxCurrentA: 16, phases: 1, phase: L2 }
    circuits:
      - { id: main, maxCurrentA: 63, maxPowerW: 40000, meter: grid, failsafeCurrentA: 6, chargePoints: [CP001-A, CP001-B, MB-1] }
      - { id: garage, parent: main, maxCurrentA: 32, chargePoints: [CP003-A] }
  - id: ghent-1
    stations:
      - id: CP010
        chargePoints: [{ id: CP010-A, connectors: [1] }]
    circuits:
      - { id: hall, maxCurrentA: 25, failsafeCurrentA: 8, chargePoints: [CP010-A] }
loadManagement: { minCurrentA: 6, raiseAfterS: 5, profileValidityS: 300 }
`);

describe("the config's circuits as the controller's site (site-projection.ts)", () => {
  it('names every connector by its connector key and tells where its limits go and where it is shown', () => {
    const projected = projectSite(config, new Set());
    expect(projected.site.settings).toEqual({ minCurrentA: 6, raiseAfterS: 5 });
    expect(projected.site.circuits).toEqual([
      { id: 'main', maxCurrentA: 63, maxPowerW: 40000, failsafeCurrentA: 6, metered: true },
      { id: 'garage', parent: 'main', maxCurrentA: 32, failsafeCurrentA: 6, metered: false },
      { id: 'hall', maxCurrentA: 25, failsafeCurrentA: 8, metered: false },
    ]);
    expect(projected.site.connectors).toEqual([
      { id: 'CP001-A/1', circuitId: 'main', maxCurrentA: 32, controllable: true, phases: 3 },
      // Not listed under chargePoints: the defaults, 3 phases and 32 A.
      { id: 'CP001-B/2', circuitId: 'main', maxCurrentA: 32, controllable: true, phases: 3 },
      // A Modbus-only charger: its meter detects sessions, nothing limits it.
      { id: 'MB-1/1', circuitId: 'main', maxCurrentA: 16, controllable: false, phases: 1, phase: 'L2' },
      { id: 'CP003-A/1', circuitId: 'garage', maxCurrentA: 32, controllable: true, phases: 3 },
      { id: 'CP010-A/1', circuitId: 'hall', maxCurrentA: 32, controllable: true, phases: 3 },
    ]);
    expect([...projected.stations]).toEqual([
      ['CP001-A/1', { stationId: 'CP001', connectorId: 1, phases: 3, failsafeA: 6 }],
      ['CP001-B/2', { stationId: 'CP001', connectorId: 2, phases: 3, failsafeA: 6 }],
      ['CP003-A/1', { stationId: 'CP003', connectorId: 1, phases: 3, failsafeA: 6 }],
      ['CP010-A/1', { stationId: 'CP010', connectorId: 1, phases: 3, failsafeA: 8 }],
    ]);
    expect([...projected.circuitOfMeter]).toEqual([['grid', 'main']]);
    expect(projected.circuitPlaces.get('main')).toEqual({ siteId: 'brussels-1', meterId: 'grid' });
    expect(projected.circuitPlaces.get('hall')).toEqual({ siteId: 'ghent-1' });
    expect(projected.addresses.get('MB-1/1')).toEqual({ siteId: 'brussels-1', chargePointId: 'MB-1', connectorId: 1 });
    expect(connectorsOfStation(projected, 'CP001').map(([key]) => key)).toEqual(['CP001-A/1', 'CP001-B/2']);
    expect(connectorsOfStation(projected, 'CP999')).toEqual([]);
  });

  it('counts the connectors of a station that refuses profiles as uncontrolled, and nothing else changes', () => {
    const controlled = projectSite(config, new Set());
    const refusing = projectSite(config, new Set(['CP001-B/2']));
    expect(refusing.site.connectors.find((k) => k.id === 'CP001-B/2')?.controllable).toBe(false);
    expect(refusing.site.connectors.filter((k) => k.id !== 'CP001-B/2')).toEqual(
      controlled.site.connectors.filter((k) => k.id !== 'CP001-B/2'),
    );
    // Its limits still have a place to go: it is sent them again once its station boots.
    expect(refusing.stations).toEqual(controlled.stations);
  });
});
