import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocate, type LoadSite, type Observation } from '../../src/load/index.js';
import { failsafeOf, loadsPhase, otherLoad, subtreeIds, violations } from './reference.js';
import { GARAGE_OF_THREE, observationArbitrary, siteArbitrary } from './site-arbitraries.js';

const PHASES = ['L1', 'L2', 'L3'] as const;
/** Shares are rounded down to 0.1 A: a saturated circuit may keep up to 0.1 A per sharing connector and phase. */
const ROUNDING = 0.1;
const TOLERANCE = 1e-6;

const scenario = siteArbitrary().chain((site) =>
  fc.record({ site: fc.constant(site), observed: observationArbitrary(site, 0) }),
);

function sharesOf(site: LoadSite, observed: Observation) {
  const charging = observed.sessions.map((s) => s.connectorKey);
  const { connectors } = allocate(site, observed, charging);
  return {
    connectors,
    sharing: new Map(connectors.filter((c) => c.state === 'sharing').map((c) => [c.connectorKey, c.shareA])),
    waiting: connectors.filter((c) => c.state === 'waiting').map((c) => c.connectorKey),
  };
}

/** Each circuit, phase by phase and in power: the sharing connectors on it and what they leave free. */
function limitsOf(site: LoadSite, observed: Observation, sharing: ReadonlyMap<string, number>) {
  return site.circuits.flatMap((c) => {
    const below = subtreeIds(site, c.id);
    const on = site.connectors.filter((k) => below.has(k.circuitId));
    const fixed = (p: (typeof PHASES)[number]) =>
      otherLoad(site, observed, c, p) +
      on.filter((k) => loadsPhase(k, p)).reduce((sum, k) => sum + (failsafeOf(site, observed, k) ?? 0), 0);
    const perPhase = PHASES.map((p) => {
      const members = on.filter((k) => loadsPhase(k, p) && sharing.has(k.id));
      const used = members.reduce((sum, k) => sum + (sharing.get(k.id) ?? 0), 0);
      return {
        name: `${c.id} ${p}`,
        members: members.map((k) => k.id),
        slack: Math.max(0, c.maxCurrentA - fixed(p)) - used,
        weight: members.length,
      };
    });
    if (c.maxPowerW === undefined) return perPhase;
    const members = on.filter((k) => sharing.has(k.id));
    const used = members.reduce((sum, k) => sum + (sharing.get(k.id) ?? 0) * k.phases, 0);
    const room = Math.max(0, c.maxPowerW / 230 - PHASES.reduce((sum, p) => sum + fixed(p), 0));
    return [
      ...perPhase,
      {
        name: `${c.id} power`,
        members: members.map((k) => k.id),
        slack: room - used,
        weight: members.reduce((sum, k) => sum + k.phases, 0),
      },
    ];
  });
}

describe('allocate', () => {
  it('never allows more than a circuit leaves free, on any phase, at any level', () => {
    fc.assert(
      fc.property(scenario, ({ site, observed }) => {
        expect(violations(site, observed, sharesOf(site, observed).sharing)).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('gives nobody less than minCurrentA but 0, and no connector more than its maxCurrentA', () => {
    fc.assert(
      fc.property(scenario, ({ site, observed }) => {
        for (const [id, shareA] of sharesOf(site, observed).sharing) {
          const max = site.connectors.find((k) => k.id === id)?.maxCurrentA ?? 0;
          expect(shareA === 0 || shareA >= site.settings.minCurrentA, `${id}: ${shareA} A`).toBe(true);
          expect(shareA).toBeLessThanOrEqual(max);
          expect(Math.round(shareA * 10) / 10).toBe(shareA);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('lets a connector wait only when it would not fit at minCurrentA beside those served and those before it that wait but would fit alone', () => {
    fc.assert(
      fc.property(scenario, ({ site, observed }) => {
        const { sharing, waiting } = sharesOf(site, observed);
        const min = site.settings.minCurrentA;
        const servable = (id: string) => (site.connectors.find((x) => x.id === id)?.maxCurrentA ?? 0) >= min;
        const violationsAt = (ids: string[]) => violations(site, observed, new Map(ids.map((id) => [id, min])));
        for (const [i, id] of waiting.entries()) {
          if (!servable(id)) continue;
          const setAside = waiting.slice(0, i).filter((v) => servable(v) && violationsAt([v]).length === 0);
          const beside = [...sharing.keys(), ...setAside];
          expect(violationsAt([...beside, id]), `${id} waits though it fits`).not.toEqual(violationsAt(beside));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('shares max-min fairly: a connector below another by more than 1 A is held by its own maximum or by a full circuit where it has the most', () => {
    fc.assert(
      fc.property(scenario, ({ site, observed }) => {
        const { sharing } = sharesOf(site, observed);
        const limits = limitsOf(site, observed, sharing);
        const largest = Math.max(0, ...sharing.values());
        for (const [id, shareA] of sharing) {
          if (shareA + 1 >= largest) continue;
          const k = site.connectors.find((x) => x.id === id);
          const ownMax = k !== undefined && shareA >= k.maxCurrentA - ROUNDING - TOLERANCE;
          const bottleneck = limits.find(
            (l) =>
              l.members.includes(id) &&
              l.slack <= ROUNDING * l.weight + TOLERANCE &&
              l.members.every((m) => (sharing.get(m) ?? 0) <= shareA + ROUNDING + TOLERANCE),
          );
          expect(ownMax || bottleneck !== undefined, `${id} at ${shareA} A while another has ${largest} A`).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('serves first those listed first', () => {
    const site = GARAGE_OF_THREE;
    const observed = {
      atMs: 0,
      readings: [],
      sessions: [{ connectorKey: 'a' }, { connectorKey: 'b' }, { connectorKey: 'c' }],
    };
    expect(
      allocate(site, observed, ['c', 'a', 'b']).connectors.map((c) => [c.connectorKey, c.state, c.shareA]),
    ).toEqual([
      ['a', 'sharing', 6.5],
      ['b', 'waiting', 0],
      ['c', 'sharing', 6.5],
    ]);
  });
});

describe('allocate, worked examples (contract 10.1: main 63 A, garage 32 A below it)', () => {
  const threePhase = (id: string, circuitId: string, controllable = true) => ({
    id,
    circuitId,
    maxCurrentA: 32,
    controllable,
    phases: 3 as const,
  });
  const site = (main: { metered?: boolean; maxPowerW?: number } = {}): LoadSite => ({
    circuits: [
      {
        id: 'main',
        maxCurrentA: 63,
        metered: main.metered ?? false,
        ...(main.maxPowerW === undefined ? {} : { maxPowerW: main.maxPowerW }),
      },
      { id: 'garage', parent: 'main', maxCurrentA: 32, metered: false },
    ],
    connectors: [
      threePhase('CP001-A', 'main'),
      threePhase('CP002-A', 'main'),
      threePhase('G1', 'garage'),
      threePhase('G2', 'garage'),
      threePhase('G3', 'garage'),
    ],
    settings: { minCurrentA: 6, raiseAfterS: 5 },
  });
  const everyone = {
    atMs: 0,
    readings: [],
    sessions: ['CP001-A', 'CP002-A', 'G1', 'G2', 'G3'].map((connectorKey) => ({ connectorKey })),
  };
  const sharesIn = (s: LoadSite, o: Observation) =>
    Object.fromEntries(allocate(s, o, []).connectors.map((c) => [c.connectorKey, c.shareA]));

  it('the garage binds first: its three get 32/3 = 10.6 A, the two on main share the 31 A left, 15.5 A each', () => {
    expect(sharesIn(site(), everyone)).toEqual({ 'CP001-A': 15.5, 'CP002-A': 15.5, G1: 10.6, G2: 10.6, G3: 10.6 });
  });

  it('maxPowerW 40000 (173.9 A over all phases at 230 V) leaves the two on main (173.9 - 9 x 10.67) / 6 = 12.98 A, rounded down', () => {
    expect(sharesIn(site({ maxPowerW: 40_000 }), everyone)).toEqual({
      'CP001-A': 12.9,
      'CP002-A': 12.9,
      G1: 10.6,
      G2: 10.6,
      G3: 10.6,
    });
  });

  it('with a meter: the other load is what it measures minus what the managed connectors draw, and headroom its most loaded phase', () => {
    const metered: LoadSite = {
      ...site({ metered: true }),
      connectors: [...site().connectors, threePhase('MB-1', 'main', false)],
    };
    const observed: Observation = {
      atMs: 0,
      readings: [{ circuitId: 'main', currentA: { L1: 40, L2: 35, L3: 30 } }],
      sessions: [{ connectorKey: 'CP001-A', drawnA: 10 }, { connectorKey: 'G1', drawnA: 10 }, { connectorKey: 'MB-1' }],
    };
    const { connectors, circuits } = allocate(metered, observed, []);
    expect(connectors.map((c) => [c.connectorKey, c.state, c.shareA])).toEqual([
      ['CP001-A', 'sharing', 21.5],
      ['G1', 'sharing', 21.5],
      ['MB-1', 'uncontrolled', 32],
    ]);
    expect(circuits.find((c) => c.circuitId === 'main')).toEqual({
      circuitId: 'main',
      meter: 'ok',
      measuredA: { L1: 40, L2: 35, L3: 30 },
      otherA: { L1: 20, L2: 15, L3: 10 },
      headroomA: 43,
    });
  });

  it('without a meter an uncontrolled connector counts at its maxCurrentA: 63 - 32 leaves 31 A, 15.5 A each', () => {
    const withModbus: LoadSite = {
      ...site(),
      connectors: [threePhase('CP001-A', 'main'), threePhase('G1', 'garage'), threePhase('MB-1', 'main', false)],
    };
    const observed = { atMs: 0, readings: [], sessions: [{ connectorKey: 'CP001-A' }, { connectorKey: 'G1' }] };
    expect(sharesIn(withModbus, observed)).toEqual({ 'CP001-A': 15.5, G1: 15.5 });
  });

  it('single-phase connectors load only their phase: three on L1 share 20 A at 6.6 A, the three-phase one finds no 6 A on L1 and waits', () => {
    const small: LoadSite = {
      circuits: [{ id: 'main', maxCurrentA: 20, metered: false }],
      connectors: [
        ...['a', 'b', 'c'].map((id) => ({
          id,
          circuitId: 'main',
          maxCurrentA: 32,
          controllable: true,
          phases: 1 as const,
          phase: 'L1' as const,
        })),
        threePhase('d', 'main'),
      ],
      settings: { minCurrentA: 6, raiseAfterS: 5 },
    };
    const observed = {
      atMs: 0,
      readings: [],
      sessions: ['a', 'b', 'c', 'd'].map((connectorKey) => ({ connectorKey })),
    };
    expect(sharesIn(small, observed)).toEqual({ a: 6.6, b: 6.6, c: 6.6, d: 0 });
  });

  it('a lost meter puts every charging connector below it at failsafeCurrentA, inherited from the circuit above', () => {
    const lost: LoadSite = {
      ...site({ metered: true }),
      circuits: site({ metered: true }).circuits.map((c) => (c.id === 'main' ? { ...c, failsafeCurrentA: 8 } : c)),
    };
    const { connectors, circuits } = allocate(lost, everyone, []);
    expect(connectors.map((c) => [c.connectorKey, c.state, c.shareA])).toEqual([
      ['CP001-A', 'failsafe', 8],
      ['CP002-A', 'failsafe', 8],
      ['G1', 'failsafe', 8],
      ['G2', 'failsafe', 8],
      ['G3', 'failsafe', 8],
    ]);
    expect(circuits.find((c) => c.circuitId === 'main')?.meter).toBe('lost');
  });
});
