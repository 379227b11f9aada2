import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { constant, type CsmsSchedules, type TemporaryLimit } from '../../src/load/index.js';
import { EffectiveLimits } from '../../src/load/effective-limits.js';
import { projectSite } from '../../src/load/site-projection.js';
import { capturedLogger } from '../support/captured-log.js';

/** Circuit main (40 A) with CP001 (connectors 1 and 2) and CP002 on it. */
const projected = projectSite(
  parseConfig(`sites:
  - id: s1
    stations:
      - { id: CP001, chargePoints: [{ id: CP001-A, connectors: [1] }, { id: CP001-B, connectors: [2] }] }
      - { id: CP002, chargePoints: [{ id: CP002-A, connectors: [1] }] }
    circuits:
      - { id: main, maxCurrentA: 40, chargePoints: [CP001-A, CP001-B, CP002-A] }
`),
  new Set(),
);

const NOW = new Date('2026-11-29T06:00:00Z');
const WINDOW = { fromMs: NOW.getTime(), toMs: NOW.getTime() + 300_000 };
const OPEN = new Map([
  ['CP001-A/1', { id: 1, startedAt: NOW.toISOString() }],
  ['CP002-A/1', { id: 2, startedAt: NOW.toISOString() }],
]);

function temporaryLimit(maxCurrentA: number, untilMs: number): TemporaryLimit {
  return {
    circuitId: 'main',
    siteId: 's1',
    maxCurrentA,
    until: new Date(untilMs),
    setAt: new Date(NOW.getTime() - 1000),
    setBy: 'cli',
  };
}

describe('the limits that hold now (effective-limits.ts)', () => {
  it('carries min(configured, temporary) on a circuit, logs a limit applying and ending once, and says why it ended', () => {
    const { logger, lines } = capturedLogger();
    let active = new Map([['main', temporaryLimit(16, NOW.getTime() + 60_000)]]);
    const limits = new EffectiveLimits({ logger, temporaryLimits: { active: () => active, onChange: () => () => {} } });
    const site = limits.apply(projected, new Map(), WINDOW, NOW);
    expect(site.circuits.map((c) => [c.id, c.maxCurrentA])).toEqual([['main', 16]]);
    expect(limits.applied.get('main')?.maxCurrentA).toBe(16);
    limits.apply(projected, new Map(), WINDOW, NOW);
    expect(lines.filter((l) => l.msg === 'temporary circuit limit applies')).toEqual([
      expect.objectContaining({ circuitId: 'main', configuredMaxCurrentA: 40, effectiveMaxCurrentA: 16 }),
    ]);

    active = new Map();
    const later = new Date(NOW.getTime() + 61_000);
    expect(limits.apply(projected, new Map(), WINDOW, later).circuits[0]?.maxCurrentA).toBe(40);
    expect(limits.applied.size).toBe(0);
    expect(lines.filter((l) => l.msg === 'temporary circuit limit ended')).toEqual([
      expect.objectContaining({ circuitId: 'main', reason: 'expired' }),
    ]);
  });

  it("caps each charging connector at the CSMS's limit and makes a station maximum a circuit of its own below", () => {
    const csmsSchedules: CsmsSchedules = {
      // CP001's maximum is 20 A for its connectors together; CP002's transaction is held at 10 A.
      scheduleOf: (stationId, place, window) =>
        constant(
          window,
          stationId === 'CP001' && place.connectorId === 0
            ? 20
            : stationId === 'CP002' && place.transaction
              ? 10
              : undefined,
        ),
      onChange: () => () => {},
    };
    const limits = new EffectiveLimits({ logger: capturedLogger().logger, csmsSchedules });
    const csms = limits.csmsSchedules(projected, OPEN, WINDOW);
    expect([...csms.keys()]).toEqual(['CP001-A/1', 'CP002-A/1']);
    const site = limits.apply(projected, csms, WINDOW, NOW);
    expect(site.circuits).toContainEqual({ id: 'station/CP001', parent: 'main', maxCurrentA: 20, metered: false });
    expect(site.connectors.map((k) => [k.id, k.circuitId, k.maxCurrentA])).toEqual([
      ['CP001-A/1', 'station/CP001', 32],
      ['CP001-B/2', 'station/CP001', 32],
      ['CP002-A/1', 'main', 10],
    ]);
  });

  it('changes nothing without temporary limits or a CSMS', () => {
    const limits = new EffectiveLimits({ logger: capturedLogger().logger });
    expect(limits.csmsSchedules(projected, OPEN, WINDOW).size).toBe(0);
    expect(limits.apply(projected, new Map(), WINDOW, NOW)).toEqual(projected.site);
  });
});
