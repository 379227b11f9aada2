import { REPORT_AFTER_RAISE_MS } from '../../../src/load/index.js';
import { benchSite, seedIdTags } from '../chargegate.js';
import { Fleet } from '../fleet.js';
import { stationIds, stationTag } from '../identities.js';
import { benchCircuits, equalShareA, OTHER_HIGH_A, OTHER_LOW_A } from '../load-site.js';
import { percentile, sleep, watchProcess } from '../measure.js';
import { freePort, type WorkerHandle } from '../processes.js';
import { eventually } from '../../../test/support/eventually.js';
import type { Scenario, ScenarioContext } from '../scenario.js';
import type { BenchSettings } from '../settings.js';
import type { BareLoadControllerApi } from '../workers/bare-load-controller.js';
import type { LoadStepApi } from '../workers/load-step.js';
import type { MetersApi } from '../workers/meters.js';
import type { StationsApi } from '../workers/stations.js';

/**
 * 8. Load control (docs/configuration/circuits.md#circuits-load-management): a car on each of 50 stations, on three nested circuits under
 * a metered main. The grid meter's other load steps up: from the step, and from the meter's reading that shows it, to
 * the last station receiving its lowered TxProfile (stamped by the stations as the frame arrives); then down again,
 * and the raise (after raiseAfterS) is waited out before the next step. Baseline: a bare modbus-serial poller at the same interval and a bare ocpp-rpc
 * server sending every station the equal share at once (workers/bare-load-controller.ts). Beside it, the cost of one
 * step of the controller's pure core with 50 connectors, against the simplest split that keeps nested limits.
 */
export const loadControl: Scenario = {
  id: 8,
  title: 'Load control: meter step to the last profile, 50 connectors on 3 nested circuits',
  async run(ctx) {
    const s = ctx.settings.load;
    const circuits = benchCircuits(s.connectors);
    const shares = {
      raisedA: equalShareA(OTHER_LOW_A, s.connectors),
      loweredA: equalShareA(OTHER_HIGH_A, s.connectors),
    };
    ctx.describe({
      ...s,
      circuits: circuits.map(({ chargePoints, ...c }) => ({ ...c, connectors: chargePoints.length })),
      otherLoadA: [OTHER_LOW_A, OTHER_HIGH_A],
      sharesA: [shares.raisedA, shares.loweredA],
    });
    const identities = stationIds(s.connectors);
    const meters = await ctx.startWorker<MetersApi>('meters');
    const grid = async (): Promise<number> => {
      const [port] = (await meters.call('start', { count: 1 })).ports;
      await meters.call('set', { index: 0, currentA: OTHER_LOW_A });
      return port!;
    };
    const carsOn = async (url: string): Promise<Fleet> => {
      const fleet = await Fleet.connect(ctx, {
        url,
        identities,
        generators: 1,
        concurrency: s.connectors,
        recordProfiles: true,
      });
      const [charged] = await fleet.all((g) => g.call('charge', undefined));
      if (charged?.firstError) throw new Error(`StartTransaction failed: ${charged.firstError}`);
      return fleet;
    };

    const bare = await ctx.side('baseline (bare modbus-serial poller, bare ocpp-rpc server)', async () => {
      const meterPort = await grid();
      const controller = await ctx.startWorker<BareLoadControllerApi>('bare-load-controller');
      const port = await freePort();
      await controller.call('listen', { port });
      const fleet = await carsOn(`ws://127.0.0.1:${port}/ocpp`);
      await controller.call('control', { meterPort, pollIntervalMs: s.pollIntervalMs, connectors: s.connectors });
      const reactions = await stepReactions(ctx, fleet.generators[0]!, meters, s, shares);
      await fleet.stop();
      await controller.call('close', undefined);
      await controller.stop();
      await meters.call('close', undefined);
      return reactions;
    });

    const chargegate = await ctx.side('chargegate', async () => {
      const meterPort = await grid();
      const site = ctx.tempSite();
      seedIdTags(site, identities.map(stationTag));
      const config = {
        sites: [
          {
            ...benchSite({
              stations: s.connectors,
              meters: [
                {
                  id: 'grid',
                  role: 'circuit',
                  model: 'sdm630',
                  connection: { type: 'tcp', host: '127.0.0.1', port: meterPort, unitId: 1 },
                  pollIntervalMs: s.pollIntervalMs,
                },
              ],
            }),
            circuits: circuits.map(({ metered, ...c }) => ({ ...c, ...(metered && { meter: 'grid' }) })),
          },
        ],
        loadManagement: { minCurrentA: 6, raiseAfterS: s.raiseAfterS, profileValidityS: 300 },
      };
      return ctx.withChargegate(
        config,
        async (daemon) => {
          const fleet = await carsOn(daemon.ocppUrl);
          const { result: reactions, cpuPercent } = await watchProcess(daemon.pid, () =>
            stepReactions(ctx, fleet.generators[0]!, meters, s, shares),
          );
          await fleet.stop();
          return { reactions, cpuPercent };
        },
        site,
      );
    });

    const cost = await ctx.side('one controller step', async () => {
      const worker = await ctx.startWorker<LoadStepApi>('load-step');
      const result = await worker.call('measure', {
        connectors: s.connectors,
        batches: s.costBatches,
        stepsPerBatch: s.costStepsPerBatch,
      });
      await worker.stop();
      return result;
    });

    const note = `other load on main ${OTHER_LOW_A} -> ${OTHER_HIGH_A} A, every car lowered from ${shares.raisedA} to ${shares.loweredA} A; ${s.steps} step(s), meter polled every ${s.pollIntervalMs} ms`;
    const slowest = (list: number[] | undefined) => (list ? Math.max(...list) : null);
    ctx.figure({
      name: `meter step to the last profile, p50, ${s.connectors} connectors`,
      unit: 'ms',
      chargegate: percentile(chargegate?.reactions.fromStepMs ?? [], 50),
      baseline: percentile(bare?.fromStepMs ?? [], 50),
      note,
    });
    ctx.figure({
      name: `meter step to the last profile, slowest, ${s.connectors} connectors`,
      unit: 'ms',
      chargegate: slowest(chargegate?.reactions.fromStepMs),
      baseline: slowest(bare?.fromStepMs),
      note: 'up to a poll of it is the wait for the reading that shows the step',
    });
    ctx.figure({
      name: `reading that shows the step to the last profile, p50, ${s.connectors} connectors`,
      unit: 'ms',
      chargegate: percentile(chargegate?.reactions.fromReadingMs ?? [], 50),
      baseline: percentile(bare?.fromReadingMs ?? [], 50),
    });
    ctx.figure({
      name: `reading that shows the step to the last profile, slowest, ${s.connectors} connectors`,
      unit: 'ms',
      chargegate: slowest(chargegate?.reactions.fromReadingMs),
      baseline: slowest(bare?.fromReadingMs),
      target: [{ on: 'chargegate', op: '<=', value: 2000 }],
      note: 'docs/configuration/circuits.md#circuits-load-management: new limits within 2 s of the meter reading that shows a step (the reading: the meter answering its first read of the phase currents after the step)',
    });
    ctx.figure({
      name: 'daemon CPU while the other load steps',
      unit: '% of a core',
      chargegate: chargegate?.cpuPercent ?? null,
      note: `meter polling, controller steps, ${s.connectors} TxProfiles per step and their renewals`,
    });
    ctx.figure({
      name: `one controller step (controlLoad), ${s.connectors} connectors, 3 nested circuits`,
      unit: 'µs',
      chargegate: cost?.controlLoadUs ?? null,
      baseline: cost?.naiveUs ?? null,
      note: 'median of batches, in one process; baseline: equal splits of each circuit, the least of a connector’s circuits',
    });
  },
};

/**
 * Steps the other load up and measures, per step, from the step and from the reading that showed it to the last
 * station receiving a limit of at most the lowered share; steps it down and waits for every car to be raised again
 * (not measured: it waits raiseAfterS). A step lands anywhere in the meter's poll period, so the first figure holds
 * up to a poll of waiting for the reading; the second is the controller's and the stations' part.
 */
async function stepReactions(
  ctx: ScenarioContext,
  stations: WorkerHandle<StationsApi>,
  meters: WorkerHandle<MetersApi>,
  s: BenchSettings['load'],
  shares: { raisedA: number; loweredA: number },
): Promise<Reactions> {
  const settle = async (sinceMs: number, done: (limitA: number) => boolean) => {
    let arrivals: Record<string, Array<{ atMs: number; limitA: number }>> = {};
    await eventually(
      async () => {
        arrivals = await stations.call('profilesSince', { sinceMs });
        const all = Object.values(arrivals);
        return all.length === s.connectors && all.every((a) => a.some((p) => done(p.limitA)));
      },
      30_000,
      () =>
        `${Object.values(arrivals).filter((a) => a.some((p) => done(p.limitA))).length} of ${s.connectors} stations`,
    );
    return Math.max(...Object.values(arrivals).map((a) => a.find((p) => done(p.limitA))!.atMs));
  };
  const reactions: Reactions = { fromStepMs: [], fromReadingMs: [] };
  // The cars start on the fail-safe (chargegate) and are raised to the share of the low other load.
  await settle(0, (limitA) => limitA === shares.raisedA);
  for (let i = 0; i < s.steps; i += 1) {
    // A step in steady state: the raised cars' stations have reported on request by then (a step that comes with a
    // raise not reported yet is answered once they do, docs/configuration/circuits.md#circuits-load-management). Settling ends just after
    // a poll: the steps are spread evenly over the poll's period, not all just after one.
    await sleep(REPORT_AFTER_RAISE_MS + 1_000 + ((i + 0.5) / s.steps) * s.pollIntervalMs);
    const upAt = await meters.call('set', { index: 0, currentA: OTHER_HIGH_A });
    const lastAt = await settle(upAt, (limitA) => limitA <= shares.loweredA);
    const readAt = await meters.call('readingAfterSet', { index: 0 });
    if (readAt === undefined) throw new Error('the limits came before any reading of the step');
    reactions.fromStepMs.push(lastAt - upAt);
    reactions.fromReadingMs.push(lastAt - readAt);
    const downAt = await meters.call('set', { index: 0, currentA: OTHER_LOW_A });
    await settle(downAt, (limitA) => limitA === shares.raisedA);
  }
  const ms = (list: number[]) => list.map((x) => x.toFixed(0)).join(', ');
  ctx.log(`    from the step: ${ms(reactions.fromStepMs)} ms; from the reading: ${ms(reactions.fromReadingMs)} ms`);
  return reactions;
}

interface Reactions {
  fromStepMs: number[];
  fromReadingMs: number[];
}
