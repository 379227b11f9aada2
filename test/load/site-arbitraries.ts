import fc from 'fast-check';
import type {
  CircuitFacts,
  CircuitReading,
  ConnectorFacts,
  LoadSite,
  Observation,
  Phase,
  Session,
} from '../../src/load/index.js';

const phase = fc.constantFrom<Phase>('L1', 'L2', 'L3');
const tenths = (min: number, max: number) => fc.integer({ min: min * 10, max: max * 10 }).map((n) => n / 10);

/**
 * Circuit trees 1-3 levels deep: each circuit hangs under an earlier one that is not yet at the third level, or is a
 * root.
 */
const circuits: fc.Arbitrary<CircuitFacts[]> = fc
  .array(
    fc.record({
      parentPick: fc.option(fc.nat(), { nil: undefined }),
      maxCurrentA: tenths(0, 80),
      maxPowerW: fc.option(fc.integer({ min: 0, max: 60_000 }), { nil: undefined }),
      failsafeCurrentA: fc.option(fc.integer({ min: 0, max: 16 }), { nil: undefined }),
      metered: fc.boolean(),
    }),
    { minLength: 1, maxLength: 6 },
  )
  .map((drawn) => {
    const depth: number[] = [];
    return drawn.map(({ parentPick, maxCurrentA, maxPowerW, failsafeCurrentA, metered }, i) => {
      const parents = depth.flatMap((d, j) => (d < 3 ? [j] : []));
      const parentIndex =
        i === 0 || parentPick === undefined || parents.length === 0 ? undefined : parents[parentPick % parents.length];
      depth.push(parentIndex === undefined ? 1 : (depth[parentIndex] ?? 0) + 1);
      return {
        id: `c${i}`,
        ...(parentIndex === undefined ? {} : { parent: `c${parentIndex}` }),
        maxCurrentA,
        ...(maxPowerW === undefined ? {} : { maxPowerW }),
        ...(failsafeCurrentA === undefined ? {} : { failsafeCurrentA }),
        metered,
      };
    });
  });

function connectorsOn(
  circuitIds: string[],
  options: { allControllable: boolean; minMaxCurrentA: number },
): fc.Arbitrary<ConnectorFacts[]> {
  return fc
    .array(
      fc.record({
        circuitId: fc.constantFrom(...circuitIds),
        maxCurrentA: tenths(options.minMaxCurrentA, 32),
        controllable: options.allControllable
          ? fc.constant(true)
          : fc.boolean().chain((b) => (b ? fc.constant(true) : fc.boolean())),
        single: fc.option(phase, { nil: undefined }),
      }),
      { maxLength: 8 },
    )
    .map((drawn) =>
      drawn.map(({ circuitId, maxCurrentA, controllable, single }, i): ConnectorFacts => {
        const base = { id: `k${i}`, circuitId, maxCurrentA, controllable };
        return single === undefined ? { ...base, phases: 3 } : { ...base, phases: 1, phase: single };
      }),
    );
}

export interface SiteOptions {
  allControllable?: boolean;
  /** The smallest maxCurrentA a connector may have (the default lets some sit below minCurrentA). */
  minMaxCurrentA?: number;
}

export function siteArbitrary(options: SiteOptions = {}): fc.Arbitrary<LoadSite> {
  return circuits.chain((cs) =>
    fc.record({
      circuits: fc.constant(cs),
      connectors: connectorsOn(
        cs.map((c) => c.id),
        { allControllable: options.allControllable ?? false, minMaxCurrentA: options.minMaxCurrentA ?? 1 },
      ),
      settings: fc.record({
        minCurrentA: fc.integer({ min: 0, max: 10 }),
        raiseAfterS: fc.integer({ min: 0, max: 30 }),
      }),
    }),
  );
}

/** Which connectors charge and what meters read: some metered circuits have lost their meter. */
export function observationArbitrary(
  site: LoadSite,
  atMs: number,
  options: { meterLoss?: boolean } = {},
): fc.Arbitrary<Observation> {
  const reading = (circuitId: string): fc.Arbitrary<CircuitReading> =>
    fc
      .record({ L1: tenths(0, 100), L2: tenths(0, 100), L3: tenths(0, 100) })
      .map((currentA) => ({ circuitId, currentA }));
  const readings = site.circuits
    .filter((c) => c.metered)
    .map((c) => ((options.meterLoss ?? true) ? fc.option(reading(c.id), { nil: undefined, freq: 8 }) : reading(c.id)));
  const sessions = site.connectors.map((k) =>
    fc.option(
      fc
        .option(tenths(0, k.maxCurrentA), { nil: undefined })
        .map((drawnA): Session => (drawnA === undefined ? { connectorKey: k.id } : { connectorKey: k.id, drawnA })),
      { nil: undefined, freq: 3 },
    ),
  );
  return fc.record({ readings: fc.tuple(...readings), sessions: fc.tuple(...sessions) }).map((o) => ({
    atMs,
    readings: o.readings.filter((r) => r !== undefined),
    sessions: o.sessions.filter((s) => s !== undefined),
  }));
}

/** The worked example of rotation: a 13 A garage with three three-phase connectors, room for two at 6 A. */
export const GARAGE_OF_THREE: LoadSite = {
  circuits: [{ id: 'garage', maxCurrentA: 13, metered: false }],
  connectors: ['a', 'b', 'c'].map((id) => ({
    id,
    circuitId: 'garage',
    maxCurrentA: 32,
    controllable: true,
    phases: 3 as const,
  })),
  settings: { minCurrentA: 6, raiseAfterS: 5 },
};
