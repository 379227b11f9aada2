import { z } from 'zod';

/** One condition of a target: the chargegate figure itself, or its ratio to the baseline, against a bound. */
const condition = z.strictObject({ on: z.enum(['chargegate', 'ratio']), op: z.enum(['>=', '<=']), value: z.number() });
export type TargetCondition = z.output<typeof condition>;

const figure = z.strictObject({
  scenario: z.number().int().min(1).max(9),
  name: z.string().min(1),
  unit: z.string(),
  chargegate: z.number().nullable(),
  baseline: z.number().nullable(),
  /** chargegate / baseline, whatever the direction: the target says which way is better. */
  ratio: z.number().nullable(),
  target: z.array(condition),
  targetText: z.string().nullable(),
  /** null when the figure has no target or could not be measured. */
  met: z.boolean().nullable(),
  note: z.string().optional(),
});
export type Figure = z.output<typeof figure>;

const scenario = z.strictObject({
  id: z.number().int().min(1).max(9),
  title: z.string().min(1),
  /** ok: both sides measured; partial: one side failed or its part is missing; failed: nothing measured. */
  status: z.enum(['ok', 'partial', 'failed']),
  errors: z.array(z.string()),
  settings: z.record(z.string(), z.unknown()),
  durationS: z.number().nonnegative(),
  figures: z.array(figure),
});
export type ScenarioResult = z.output<typeof scenario>;

export const benchResultsSchema = z.strictObject({
  mode: z.enum(['quick', 'full']),
  startedAt: z.iso.datetime({ offset: true }),
  finishedAt: z.iso.datetime({ offset: true }),
  machine: z.strictObject({
    cpus: z.number().int().positive(),
    cpuModel: z.string(),
    memoryMB: z.number().positive(),
    node: z.string(),
    openFilesLimit: z.number().nullable(),
    /** 1-minute load average when the run started and ended: anything else running on the box skews every figure. */
    loadAverage: z.strictObject({ atStart: z.number().nonnegative(), atEnd: z.number().nonnegative() }),
  }),
  daemon: z.strictObject({ command: z.string(), note: z.string().optional() }),
  scenarios: z.array(scenario),
});
export type BenchResults = z.output<typeof benchResultsSchema>;

export interface FigureInput {
  name: string;
  unit: string;
  chargegate: number | null;
  baseline?: number | null;
  target?: TargetCondition[];
  note?: string;
}

/** Builds a figure row: the ratio and whether the target is met follow from the two measurements. */
export function makeFigure(scenarioId: number, input: FigureInput): Figure {
  const baseline = input.baseline ?? null;
  const ratio = input.chargegate !== null && baseline !== null && baseline !== 0 ? input.chargegate / baseline : null;
  const target = input.target ?? [];
  const met =
    target.length === 0
      ? null
      : target.every((c) => meets(c, c.on === 'ratio' ? ratio : input.chargegate))
        ? true
        : unmeasurable(target, input.chargegate, ratio)
          ? null
          : false;
  return {
    scenario: scenarioId,
    name: input.name,
    unit: input.unit,
    chargegate: round(input.chargegate),
    baseline: round(baseline),
    ratio: round(ratio),
    target,
    targetText: target.length === 0 ? null : target.map((c) => describe(c, input.unit)).join(' and '),
    met,
    ...(input.note !== undefined && { note: input.note }),
  };
}

function meets(c: TargetCondition, value: number | null): boolean {
  if (value === null) return false;
  return c.op === '>=' ? value >= c.value : value <= c.value;
}

/** A target whose inputs are missing is neither met nor missed: the row says why in its note. */
function unmeasurable(target: TargetCondition[], chargegate: number | null, ratio: number | null): boolean {
  return target.some((c) => (c.on === 'ratio' ? ratio : chargegate) === null);
}

function describe(c: TargetCondition, unit: string): string {
  return c.on === 'ratio' ? `${c.op} ${c.value}x baseline` : `${c.op} ${c.value} ${unit}`.trimEnd();
}

/** Three or so significant digits: more would only show the noise. */
function round(value: number | null): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  const decimals = Math.abs(value) >= 10 ? 1 : Math.abs(value) >= 1 ? 2 : 3;
  return Number(value.toFixed(decimals));
}
