import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildForBench } from './build.js';
import { KeystoreTemplate } from '../../test/support/keystore-template.js';
import { nowMs, openFilesLimit } from './measure.js';
import { ProcessGroup } from './processes.js';
import { benchResultsSchema, type BenchResults, type ScenarioResult } from './results.js';
import { ScenarioContext, type Scenario } from './scenario.js';
import { SCENARIOS } from './scenarios/index.js';
import { FULL, QUICK } from './settings.js';

export interface BenchOptions {
  quick: boolean;
  /** Scenario ids to run; all when absent. */
  only?: number[];
  /** Where the JSON results go. */
  out: string;
  /** Write V8 CPU profiles of the daemon and every worker into this directory. */
  profileDir?: string;
  log?: (line: string) => void;
}

/** Runs the scenarios one after another (they would disturb each other's figures), then writes the results. */
export async function runBench(options: BenchOptions): Promise<BenchResults> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const settings = options.quick ? QUICK : FULL;
  const startedAt = new Date();
  const loadAtStart = os.loadavg()[0] ?? 0;
  log(`bench (${settings.mode}): building`);
  const build = buildForBench();
  for (const note of build.notes) log(`note: ${note}`);
  const launcher = { built: build.daemonBuilt, ...(options.profileDir && { profileDir: options.profileDir }) };
  const keys = await KeystoreTemplate.create();
  const scenarios: ScenarioResult[] = [];
  try {
    for (const scenario of SCENARIOS.filter((s) => !options.only || options.only.includes(s.id))) {
      log(`scenario ${scenario.id}: ${scenario.title}`);
      const ctx = new ScenarioContext(
        scenario,
        settings,
        new ProcessGroup(build.workerDir, options.profileDir),
        launcher,
        keys,
        scenarios,
        log,
      );
      const result = await runScenario(scenario, ctx, settings.scenarioTimeoutS);
      for (const error of result.errors) log(`  error: ${error}`);
      scenarios.push(result);
    }
  } finally {
    keys.cleanup();
  }
  const results = benchResultsSchema.parse({
    mode: settings.mode,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryMB: Math.round(os.totalmem() / 2 ** 20),
      node: process.version,
      openFilesLimit: finiteOrNull(openFilesLimit()),
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg()[0] ?? 0 },
    },
    daemon: { command: build.daemonCommand, ...(build.notes.length > 0 && { note: build.notes.join('; ') }) },
    scenarios,
  } satisfies BenchResults);
  mkdirSync(path.dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  return results;
}

async function runScenario(scenario: Scenario, ctx: ScenarioContext, timeoutS: number): Promise<ScenarioResult> {
  const startedAt = nowMs();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      scenario.run(ctx),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`scenario timed out after ${timeoutS} s`)), timeoutS * 1000);
      }),
    ]);
  } catch (err) {
    ctx.errors.push(err instanceof Error ? err.message : String(err));
  } finally {
    clearTimeout(timer);
    await ctx.close();
  }
  const measured = ctx.figures.some((f) => f.chargegate !== null || f.baseline !== null);
  return {
    id: scenario.id,
    title: scenario.title,
    status: ctx.errors.length === 0 ? 'ok' : measured ? 'partial' : 'failed',
    errors: ctx.errors,
    settings: ctx.recordedSettings,
    durationS: Math.round((nowMs() - startedAt) / 100) / 10,
    figures: ctx.figures,
  };
}

function finiteOrNull(value: number | null): number | null {
  return value !== null && Number.isFinite(value) ? value : null;
}
