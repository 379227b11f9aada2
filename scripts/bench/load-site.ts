import { stationIds } from './identities.js';

/**
 * Scenario 8's site: `connectors` bench stations (one charge point, connector 1, 3 phases, 32 A each) on three nested
 * circuits: a metered `main`, a `hall` below it and a `row` below that, 40 %, 40 % and 20 % of them. The other load
 * on main's meter steps between LOW and HIGH: every car shares (630 - 31) / 50 = 11.98 A, sent as 11.9, then
 * (630 - 321) / 50 = 6.18 A, sent as 6.1. The figures keep clear of the 0.1 A rounding.
 */
export const MAIN_LIMIT_A = 630;
export const OTHER_LOW_A = 31;
export const OTHER_HIGH_A = 321;

export interface BenchCircuit {
  id: string;
  parent?: string;
  maxCurrentA: number;
  metered: boolean;
  chargePoints: string[];
}

export function benchCircuits(connectors: number): BenchCircuit[] {
  const chargePoints = stationIds(connectors).map((id) => `${id}-A`);
  const onMain = Math.round(connectors * 0.4);
  const onHall = Math.round(connectors * 0.4);
  return [
    { id: 'main', maxCurrentA: MAIN_LIMIT_A, metered: true, chargePoints: chargePoints.slice(0, onMain) },
    {
      id: 'hall',
      parent: 'main',
      maxCurrentA: 400,
      metered: false,
      chargePoints: chargePoints.slice(onMain, onMain + onHall),
    },
    { id: 'row', parent: 'hall', maxCurrentA: 160, metered: false, chargePoints: chargePoints.slice(onMain + onHall) },
  ];
}

/** What every car is allowed beside `otherA` on main: an equal share, the nested limits binding nobody here. */
export function equalShareA(otherA: number, connectors: number): number {
  return Math.floor(((MAIN_LIMIT_A - otherA) / connectors) * 10) / 10;
}
