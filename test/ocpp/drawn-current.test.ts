import { describe, expect, it } from 'vitest';
import { drawnCurrentA } from '../../src/ocpp/drawn-current.js';

describe("a car's draw from Current.Import samples (docs/configuration/circuits.md#circuits-load-management)", () => {
  it('per phase: the least loaded phase a sample names, L1-N as L1, the neutral not a phase', () => {
    const samples = [
      { phase: 'L1', valueA: 16 },
      { phase: 'L2-N', valueA: 15.5 },
      { phase: 'L3', valueA: 16.2 },
      { phase: 'N', valueA: 0.4 },
    ];
    expect(drawnCurrentA([samples])).toEqual({ drawnA: 15.5, refused: 0 });
  });

  it('a sample without a phase when no phase is named; the last meter value that has one counts', () => {
    expect(drawnCurrentA([[{ valueA: 20 }], [], [{ valueA: 12 }], []])).toEqual({ drawnA: 12, refused: 0 });
    expect(drawnCurrentA([[{ valueA: 20 }, { phase: 'L1', valueA: 10 }]])).toEqual({ drawnA: 10, refused: 0 });
  });

  it('no current, negative, or beyond any charger: refused and counted, the others still used', () => {
    expect(drawnCurrentA([[{ valueA: Number.NaN }, { valueA: -1 }, { valueA: 1e9 }]])).toEqual({ refused: 3 });
    expect(
      drawnCurrentA([
        [
          { phase: 'L1', valueA: Number('abc') },
          { phase: 'L2', valueA: 8 },
        ],
      ]),
    ).toEqual({
      drawnA: 8,
      refused: 1,
    });
    expect(drawnCurrentA([])).toEqual({ refused: 0 });
  });
});
