import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { installedNodeArgs } from '../../../test/support/cli.js';
import { benchSite } from '../chargegate.js';
import { median, nowMs, processStats, sleep } from '../measure.js';
import { freePort } from '../processes.js';
import type { Scenario, ScenarioContext } from '../scenario.js';

/**
 * 6. Footprint: what the daemon costs a small gateway doing nothing, and how fast it is back after a restart.
 * Baseline (no target): a bare Node.js process, the floor any Node daemon starts from.
 */
export const footprint: Scenario = {
  id: 6,
  title: 'Footprint: idle RSS and start-up to ready',
  async run(ctx) {
    const { starts, idleS } = ctx.settings.footprint;
    ctx.describe({
      starts,
      idleS,
      config: 'one site, one station, one webhook (receiver absent, nothing to send), no meters',
    });
    const config = {
      sites: [benchSite({ stations: 1, webhookUrl: `http://127.0.0.1:${await freePort()}/webhook/events` })],
    };

    const chargegate = await ctx.side('chargegate', async () => {
      const site = ctx.tempSite({ newKeys: true });
      const startups: number[] = [];
      const selfReported: number[] = [];
      let idleRssMB = 0;
      for (let i = 0; i < starts; i++) {
        const daemon = await ctx.startChargegate(config, site);
        startups.push(daemon.startupMs);
        if (daemon.selfReportedReadyMs !== null) selfReported.push(daemon.selfReportedReadyMs);
        if (i === starts - 1) {
          await sleep(idleS * 1000);
          daemon.assertAlive();
          idleRssMB = processStats(daemon.pid).rssMB;
        }
        await daemon.stop();
      }
      return {
        firstStartMs: startups[0] ?? null,
        warmStartMs: median(startups.slice(1)),
        selfReportedMs: median(selfReported.slice(1)),
        idleRssMB,
      };
    });
    const node = await ctx.side('baseline (bare Node.js)', () => bareNode(ctx, idleS));
    const stack = await ctx.side('reference (the dependencies alone)', () => dependenciesAlone(ctx, idleS));

    ctx.figure({
      name: 'idle RSS',
      unit: 'MB',
      chargegate: chargegate?.idleRssMB ?? null,
      baseline: node?.idleRssMB ?? null,
      target: [{ on: 'chargegate', op: '<=', value: 80 }],
    });
    ctx.figure({
      name: 'start-up to ready, existing data dir',
      unit: 'ms',
      chargegate: chargegate?.warmStartMs ?? null,
      baseline: node?.startupMs ?? null,
      target: [{ on: 'chargegate', op: '<=', value: 1500 }],
      ...(chargegate?.selfReportedMs != null && {
        note: `spawn to the "chargegate ready" log line; the daemon's own readyMs (after Node's boot and module loading) was ${Math.round(chargegate.selfReportedMs)} ms`,
      }),
    });
    ctx.figure({
      name: 'first start to ready, new data dir',
      unit: 'ms',
      chargegate: chargegate?.firstStartMs ?? null,
      baseline: node?.startupMs ?? null,
      target: [{ on: 'chargegate', op: '<=', value: 1500 }],
      note: 'the first start creates the database and generates the keystore keys',
    });
    ctx.figure({
      name: 'idle RSS of the dependencies alone',
      unit: 'MB',
      chargegate: stack?.idleRssMB ?? null,
      baseline: node?.idleRssMB ?? null,
      note: `the floor under the idle RSS target: Node.js importing what the daemon loads at start (${STARTUP_DEPENDENCIES.join(', ')}) and nothing else; imports took ${stack ? Math.round(stack.startupMs) : '-'} ms`,
    });
  },
};

/** The runtime dependencies an idle daemon loads; modbus-serial, serialport and node-forge load only when used. */
const LAZY_DEPENDENCIES = new Set(['modbus-serial', 'serialport', 'node-forge']);
const STARTUP_DEPENDENCIES = Object.keys(
  (
    JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    }
  ).dependencies,
).filter((name) => !LAZY_DEPENDENCIES.has(name));

/**
 * Spawn to "imports done" and idle RSS of a Node.js process (the unit's Node.js options) that imports the startup
 * dependencies and does nothing else.
 */
async function dependenciesAlone(
  ctx: ScenarioContext,
  idleS: number,
): Promise<{ startupMs: number; idleRssMB: number }> {
  const code = `await Promise.all(${JSON.stringify(STARTUP_DEPENDENCIES)}.map((name) => import(name))); process.stdout.write('ready\\n'); setInterval(() => {}, 60_000);`;
  return idleProcess(ctx, [...installedNodeArgs(), '--input-type=module', '-e', code], idleS);
}

/** Spawn to first output line and idle RSS of `node -e` doing nothing. */
function bareNode(ctx: ScenarioContext, idleS: number): Promise<{ startupMs: number; idleRssMB: number }> {
  return idleProcess(ctx, ['-e', "process.stdout.write('ready\\n'); setInterval(() => {}, 60_000);"], idleS);
}

/** Spawn to the first output line, then RSS after idleS of a node process run with args (from the project root). */
async function idleProcess(
  ctx: ScenarioContext,
  args: string[],
  idleS: number,
): Promise<{ startupMs: number; idleRssMB: number }> {
  const spawnedAt = nowMs();
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: fileURLToPath(new URL('../../../', import.meta.url)),
  });
  ctx.processes.adopt(child);
  await once(child.stdout, 'data');
  const startupMs = nowMs() - spawnedAt;
  await sleep(idleS * 1000);
  const idleRssMB = processStats(child.pid!).rssMB;
  child.kill();
  return { startupMs, idleRssMB };
}
