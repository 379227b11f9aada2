import { MAX_CURRENT_A } from '../site/index.js';
import type { StationHandlerDeps } from './call-handling.js';

/** A Current.Import sample as both protocol versions carry it, the value already in amperes. */
export interface CurrentSample {
  phase?: string;
  valueA: number;
}

/** What a connector draws per phase from a message's Current.Import samples; undefined without a usable one. */
export interface DrawnCurrent {
  drawnA?: number;
  /** Samples that are no current (not finite, negative, beyond any charger): ignored, for the caller to warn about. */
  refused: number;
}

const PHASE_OF = /^(L[123])(-N)?$/;

/**
 * The load controller's `drawnA` (docs/configuration/circuits.md#circuits-load-management): per phase, so the least loaded phase a
 * sample names (what the car surely draws on each of its phases; subtracting more would hide other load), else the
 * sample without a phase. Only the last meter value that has Current.Import counts: it is the latest.
 */
export function drawnCurrentA(meterValues: readonly (readonly CurrentSample[])[]): DrawnCurrent {
  let refused = 0;
  let drawnA: number | undefined;
  for (const samples of meterValues) {
    const usable = samples.filter((s) => {
      const ok = Number.isFinite(s.valueA) && s.valueA >= 0 && s.valueA <= MAX_CURRENT_A;
      if (!ok) refused++;
      return ok;
    });
    const phased = usable.filter((s) => s.phase !== undefined && PHASE_OF.test(s.phase));
    const unphased = usable.filter((s) => s.phase === undefined);
    if (phased.length > 0) drawnA = Math.min(...phased.map((s) => s.valueA));
    else if (unphased.length > 0) drawnA = unphased[unphased.length - 1]?.valueA;
  }
  return { ...(drawnA !== undefined && { drawnA }), refused };
}

/**
 * Tells the domain what the car on a station's connector draws, from one message's meter values, when a transaction
 * is open there; samples that are no current are warned about and ignored (the draw only steers sharing; the
 * message's other values still count).
 */
export function noteDrawnCurrent(
  deps: Pick<StationHandlerDeps, 'site' | 'warn'>,
  at: { stationId: string; connectorId: number },
  meterValues: readonly (readonly CurrentSample[])[],
): void {
  if (meterValues.every((samples) => samples.length === 0)) return;
  const { drawnA, refused } = drawnCurrentA(meterValues);
  if (refused > 0) deps.warn({ connectorId: at.connectorId, refused }, 'Current.Import that is no current: ignored');
  if (drawnA === undefined) return;
  const open = deps.site.transactions.openOn(at.stationId, at.connectorId);
  if (open) deps.site.transactions.noteDrawn(open.id, drawnA);
}
