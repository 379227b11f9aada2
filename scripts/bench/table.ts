import { table } from '../../src/cli/context.js';
import type { BenchResults } from './results.js';

/** The one table `npm run bench` prints: figure, chargegate, baseline, ratio, target, met?; notes and errors below. */
export function renderResults(results: BenchResults): string {
  const notes: string[] = [];
  const rows = results.scenarios.flatMap((s) =>
    s.figures.map((f) => {
      let name = f.name;
      if (f.note) {
        notes.push(`[${notes.length + 1}] ${f.note}`);
        name += ` [${notes.length}]`;
      }
      return [
        String(s.id),
        name,
        withUnit(f.chargegate, f.unit),
        withUnit(f.baseline, f.unit),
        f.ratio === null ? '-' : `${f.ratio}x`,
        f.targetText ?? '-',
        f.met === null ? '-' : f.met ? 'yes' : 'NO',
      ];
    }),
  );
  const problems = results.scenarios
    .filter((s) => s.status !== 'ok')
    .map((s) => `scenario ${s.id} (${s.title}) ${s.status}: ${s.errors.join('; ')}`);
  return [
    `chargegate bench, ${results.mode} run, ${results.machine.cpus} x ${results.machine.cpuModel}, Node ${results.machine.node}, load average ${results.machine.loadAverage.atStart.toFixed(1)} at start, ${results.machine.loadAverage.atEnd.toFixed(1)} at end`,
    '',
    table(['#', 'figure', 'chargegate', 'baseline', 'ratio', 'target', 'met?'], rows),
    ...(notes.length > 0 ? ['', ...notes] : []),
    ...(problems.length > 0 ? ['', ...problems] : []),
    ...(results.daemon.note ? ['', `daemon: ${results.daemon.note}`] : []),
  ].join('\n');
}

function withUnit(value: number | null, unit: string): string {
  return value === null ? '-' : `${value} ${unit}`.trimEnd();
}
