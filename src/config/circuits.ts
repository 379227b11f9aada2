import type { z } from 'zod';

/** A charge point the site's `chargePoints` does not list (docs/configuration/circuits.md#circuits-load-management). */
export const CHARGE_POINT_DEFAULTS = { maxCurrentA: 32, phases: 3 } as const;

/** The failsafe of a circuit without its own (docs/configuration/circuits.md#circuits-load-management). */
const DEFAULT_FAILSAFE_CURRENT_A = 6;

/** A circuit as the schema parsed it, before inheritance gave it its failsafeCurrentA. */
interface Circuit {
  id: string;
  parent?: string | undefined;
  maxCurrentA: number;
  meter?: string | undefined;
  failsafeCurrentA?: number | undefined;
  chargePoints: readonly string[];
}

interface SiteShape {
  stations: ReadonlyArray<{ chargePoints: ReadonlyArray<{ id: string }> }>;
  meters: ReadonlyArray<{ id: string; role: 'session' | 'circuit'; chargePointId?: string }>;
  chargePoints: ReadonlyArray<{ id: string; maxCurrentA: number }>;
  circuits: readonly Circuit[];
}

/**
 * The site-wide rules of load management: every name a circuit uses exists in its own site, the circuits form a
 * tree, a charge point answers to one circuit, and no circuit's or charge point's limit is below what a car needs nor a
 * circuit's under its own failsafe. Circuit ids are unique across sites, since `load limit CIRCUIT` and the metrics name a circuit alone.
 */
export function circuitProblems(sites: readonly SiteShape[], minCurrentA: number, ctx: z.RefinementCtx): void {
  const circuitIds = new Set<string>();
  sites.forEach((s, si) => {
    const chargePointIds = new Set([
      ...s.stations.flatMap((st) => st.chargePoints.map((cp) => cp.id)),
      ...s.meters.flatMap((m) => (m.chargePointId ? [m.chargePointId] : [])),
    ]);
    s.chargePoints.forEach((cp, cpi) => {
      if (!chargePointIds.has(cp.id))
        ctx.addIssue({
          code: 'custom',
          path: ['sites', si, 'chargePoints', cpi, 'id'],
          message: `no charge point "${cp.id}" in this site`,
        });
      // Nobody is given between 0 and minCurrentA: such a charge point would sit at 0 A for good.
      if (cp.maxCurrentA < minCurrentA)
        ctx.addIssue({
          code: 'custom',
          path: ['sites', si, 'chargePoints', cpi, 'maxCurrentA'],
          message: `${cp.maxCurrentA} is below loadManagement.minCurrentA (${minCurrentA}): it could never be served`,
        });
    });
    const byId = new Map(s.circuits.map((c) => [c.id, c]));
    const circuitOf = new Map<string, string>();
    const meteredBy = new Map<string, string>();
    s.circuits.forEach((c, ci) => {
      const at = (...key: Array<string | number>) => ['sites', si, 'circuits', ci, ...key];
      if (circuitIds.has(c.id))
        ctx.addIssue({ code: 'custom', path: at('id'), message: `duplicate circuit id "${c.id}"` });
      circuitIds.add(c.id);
      if (c.parent !== undefined && !byId.has(c.parent))
        ctx.addIssue({ code: 'custom', path: at('parent'), message: `no circuit "${c.parent}" in this site` });
      const cycle = cycleFrom(c, byId);
      // Every member of a cycle would find it: it is told once, at the member listed first.
      if (cycle && s.circuits.findIndex((other) => cycle.includes(other.id)) === ci)
        ctx.addIssue({ code: 'custom', path: at('parent'), message: `a cycle: ${cycle.join(' -> ')}` });
      if (c.maxCurrentA < minCurrentA)
        ctx.addIssue({
          code: 'custom',
          path: at('maxCurrentA'),
          message: `${c.maxCurrentA} is below loadManagement.minCurrentA (${minCurrentA})`,
        });
      const failsafe = failsafeOf(c, byId);
      if (failsafe && failsafe.currentA > c.maxCurrentA) {
        const message =
          failsafe.from === c
            ? `${failsafe.currentA} is above maxCurrentA (${c.maxCurrentA})`
            : `${failsafe.currentA} (inherited from circuit "${failsafe.from.id}") is above maxCurrentA (${c.maxCurrentA}); set a lower one here`;
        ctx.addIssue({ code: 'custom', path: at('failsafeCurrentA'), message });
      }
      if (c.meter !== undefined) {
        const meter = s.meters.find((m) => m.id === c.meter);
        if (!meter) ctx.addIssue({ code: 'custom', path: at('meter'), message: `no meter "${c.meter}" in this site` });
        else if (meter.role !== 'circuit')
          ctx.addIssue({
            code: 'custom',
            path: at('meter'),
            message: `meter "${meter.id}" is role: ${meter.role}; a circuit needs a role: circuit meter`,
          });
        // What a meter sees is one circuit's load: counted for two, the other load would be counted twice.
        else if (meteredBy.has(meter.id))
          ctx.addIssue({
            code: 'custom',
            path: at('meter'),
            message: `meter "${meter.id}" already measures circuit "${meteredBy.get(meter.id)}"`,
          });
        meteredBy.set(c.meter, meteredBy.get(c.meter) ?? c.id);
      }
      c.chargePoints.forEach((cp, cpi) => {
        const other = circuitOf.get(cp);
        if (!chargePointIds.has(cp))
          ctx.addIssue({
            code: 'custom',
            path: at('chargePoints', cpi),
            message: `no charge point "${cp}" in this site`,
          });
        else if (other !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: at('chargePoints', cpi),
            message: `charge point "${cp}" is already in circuit "${other}"`,
          });
        circuitOf.set(cp, other ?? c.id);
      });
    });
  });
}

/** The ids from `start` up its parents back to `start`, when the walk comes back to it. */
function cycleFrom(start: Circuit, byId: ReadonlyMap<string, Circuit>): string[] | undefined {
  const path = [start.id];
  for (
    let c = start.parent === undefined ? undefined : byId.get(start.parent);
    c;
    c = c.parent === undefined ? undefined : byId.get(c.parent)
  ) {
    path.push(c.id);
    if (c === start) return path;
    if (path.length > byId.size + 1) return undefined;
  }
  return undefined;
}

/**
 * The nearest failsafeCurrentA up the parents, and the circuit that sets it; undefined on an unknown or cyclic parent.
 */
function failsafeOf(
  start: Circuit,
  byId: ReadonlyMap<string, Circuit>,
): { currentA: number; from: Circuit } | undefined {
  const seen = new Set<Circuit>();
  for (
    let c: Circuit | undefined = start;
    c && !seen.has(c);
    c = c.parent === undefined ? undefined : byId.get(c.parent)
  ) {
    if (c.failsafeCurrentA !== undefined) return { currentA: c.failsafeCurrentA, from: c };
    seen.add(c);
    if (c.parent === undefined) return { currentA: DEFAULT_FAILSAFE_CURRENT_A, from: c };
  }
  return undefined;
}

/** A site's circuits with every failsafeCurrentA resolved; only for circuits circuitProblems accepted. */
export function withInheritedFailsafe<C extends Circuit>(
  circuits: readonly C[],
): Array<C & { failsafeCurrentA: number }> {
  const byId = new Map(circuits.map((c) => [c.id, c]));
  return circuits.map((c) => ({ ...c, failsafeCurrentA: failsafeOf(c, byId)!.currentA }));
}
