import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { benchResultsSchema } from '../../scripts/bench/results.js';
import { ROOT } from '../support/cli.js';

/**
 * Keeps `npm run bench` working: the quick run must produce a complete, well-formed results file with every
 * scenario measured on both sides. What the figures are is the bench's business, not the test's.
 */
describe('npm run bench -- --quick', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'chargegate-bench-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('measures all nine scenarios and writes them as JSON beside the printed table', async () => {
    const out = path.join(dir, 'results.json');
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'npm',
        ['run', 'bench', '--silent', '--', '--quick', '--out', out],
        { cwd: ROOT, timeout: 600_000, maxBuffer: 16 * 2 ** 20 },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
    });
    expect(code, stderr).toBe(0);

    const results = benchResultsSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
    expect(results.mode).toBe('quick');
    expect(results.scenarios.map((s) => s.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const scenario of results.scenarios) {
      expect(scenario.errors, `scenario ${scenario.id}`).toEqual([]);
      expect(scenario.status).toBe('ok');
      expect(scenario.figures.length).toBeGreaterThan(0);
      for (const figure of scenario.figures) {
        // Scenario 9 counts fsyncs with strace, which a machine may lack: that figure then says so instead.
        if (figure.note?.startsWith('strace unavailable')) continue;
        expect(figure.chargegate, `${scenario.id} ${figure.name}`).not.toBeNull();
        // A figure with a target is judged: measured inputs give met true or false, never "unknown".
        if (figure.target.length > 0) expect(typeof figure.met, `${scenario.id} ${figure.name}`).toBe('boolean');
        if (figure.target.some((c) => c.on === 'ratio'))
          expect(figure.baseline, `${scenario.id} ${figure.name}`).not.toBeNull();
      }
    }
    // Each of the baselines is measured in the same run.
    const baselineOf = (id: number) =>
      results.scenarios.find((s) => s.id === id)!.figures.filter((f) => f.baseline !== null);
    for (const id of [1, 3, 4, 5, 6, 7, 8]) expect(baselineOf(id).length, `scenario ${id} baseline`).toBeGreaterThan(0);

    const header = stdout.split('\n').find((line) => line.startsWith('#'));
    expect(header?.split(/\s{2,}/)).toEqual(['#', 'figure', 'chargegate', 'baseline', 'ratio', 'target', 'met?']);
    for (const scenario of results.scenarios)
      for (const figure of scenario.figures) expect(stdout).toContain(figure.name);
  }, 600_000);
});
