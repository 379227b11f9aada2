import { benchSite, seedIdTags, type ChargegateProcess } from '../chargegate.js';
import { failureNote, Fleet } from '../fleet.js';
import { stationIds, stationTag } from '../identities.js';
import { nowMs, processStats, sleepUntil, threadCpuS } from '../measure.js';
import { outboxCounts, total } from '../outbox-view.js';
import type { WorkerHandle } from '../processes.js';
import { eventually } from '../../../test/support/eventually.js';
import type { Scenario, ScenarioContext } from '../scenario.js';
import type { NaiveChainApi } from '../workers/naive-chain.js';
import type { ReceiverApi } from '../workers/receiver.js';
import type { WebhookSignature } from '../../../src/config/index.js';

export const EVENTS_PER_S = 'events/s delivered';

/**
 * Queue capacity for the load scenarios. Stations can commit events faster than one FIFO queue delivers them;
 * with the default 1,000 the overflow would go to the dead letters, and the figure would no longer be about
 * every event being delivered.
 */
export const BACKLOG_ROOM = 1_000_000;

/**
 * The webhook signatures scenarios 1 and 2 measure side by side, chargegate and its naive chain alike: the documented
 * profile (RSA-PSS with the 3072-bit key: the figures' plain names, kept from earlier runs) and rfc9421 with Ed25519.
 */
export const SIGNATURES = [
  {
    suffix: '',
    text: 'documented (RSA-PSS SHA-256, RSA 3072)',
    signature: { profile: 'documented', alg: 'rsa-pss-sha256' },
  },
  { suffix: ' (Ed25519)', text: 'rfc9421 ed25519', signature: { profile: 'rfc9421', alg: 'ed25519' } },
] as const satisfies ReadonlyArray<{ suffix: string; text: string; signature: WebhookSignature }>;

export type SignatureVariant = (typeof SIGNATURES)[number];

/**
 * 1. Event pipeline: stations start and stop transactions back to back; every event (StartTransaction, the
 * post-start Authorize, StopTransaction) is committed, signed and delivered to a loopback receiver. Once per
 * signature (SIGNATURES), each beside its own naive chain. Baseline: the naive chain of the same primitives in one
 * loop (workers/naive-chain.ts).
 */
export const eventPipeline: Scenario = {
  id: 1,
  title: 'Event pipeline: events committed, signed and delivered',
  async run(ctx) {
    const s = ctx.settings.pipeline;
    ctx.describe({
      ...s,
      load: 'each station: StartTransaction then StopTransaction, closed loop',
      webhook: `one, all four event types; signatures in turn: ${SIGNATURES.map((v) => v.text).join(', ')}`,
      queueCapacity: BACKLOG_ROOM,
    });
    const receiver = await ctx.startWorker<ReceiverApi>('receiver');
    const { port } = await receiver.call('up', {});
    const url = `http://127.0.0.1:${port}/webhook/events`;
    for (const variant of SIGNATURES) await pipeline(ctx, variant, receiver, url);
  },
};

/** Scenario 1 with one signature: the naive chain alone, then chargegate under station load; its figures. */
async function pipeline(
  ctx: ScenarioContext,
  variant: SignatureVariant,
  receiver: WorkerHandle<ReceiverApi>,
  url: string,
): Promise<void> {
  const s = ctx.settings.pipeline;
  const { suffix, signature } = variant;
  await receiver.call('reset', undefined);
  const naive = await ctx.side(`baseline (naive chain)${suffix}`, async () => {
    const chain = await ctx.startWorker<NaiveChainApi>('naive-chain');
    await chain.call('open', { dataDir: ctx.tempSite().dataDir, url, signature });
    const writtenBefore = processStats(chain.pid).writtenBytes;
    const { delivered, total } = await chain.call('run', {
      startAtMs: nowMs() + 200,
      warmupMs: s.warmupS * 1000,
      measureMs: s.measureS * 1000,
    });
    const { peakRssMB, writtenBytes } = processStats(chain.pid);
    const signing = await chain.call('signRate', { durationMs: s.signRateS * 1000 });
    await chain.call('close', undefined);
    await chain.stop();
    return {
      eventsPerS: delivered / s.measureS,
      peakRssMB,
      signing,
      kBPerEvent: (writtenBytes - writtenBefore) / 1024 / total,
    };
  });
  await receiver.call('reset', undefined);

  const identities = stationIds(s.stations);
  const site = ctx.tempSite();
  seedIdTags(site, identities.map(stationTag));
  const config = {
    sites: [benchSite({ stations: s.stations, webhookUrl: url, signature })],
    webhookDelivery: { queueCapacity: BACKLOG_ROOM },
  };
  const chargegate = await ctx.side(`chargegate${suffix}`, () =>
    ctx.withChargegate(
      config,
      async (daemon) => {
        const fleet = await Fleet.connect(ctx, { url: daemon.ocppUrl, identities, generators: 1, concurrency: 25 });
        const writtenBefore = processStats(daemon.pid).writtenBytes;
        const startAtMs = nowMs() + 300;
        const from = startAtMs + s.warmupS * 1000;
        const [[load], cpu] = await Promise.all([
          fleet.all((g) => g.call('pipeline', { startAtMs, warmupMs: s.warmupS * 1000, measureMs: s.measureS * 1000 })),
          cpuInWindow(daemon.pid, from, from + s.measureS * 1000),
        ]);
        await fleet.stop();
        const inWindow = (await receiver.call('arrivals', undefined)).filter(
          (a) => a.atMs >= from && a.atMs <= from + s.measureS * 1000,
        ).length;
        const peakRssMB = processStats(daemon.pid).peakRssMB;
        // The rate stands even if the backlog then fails to drain: that is recorded as an error of its own.
        await ctx.side(`chargegate${suffix}, delivering the backlog after the load`, () =>
          drained(ctx, daemon, receiver),
        );
        // Everything the load wrote, bookkeeping of the drain included, over every event delivered.
        const delivered = (await receiver.call('count', undefined)).distinct;
        const kBPerEvent = (processStats(daemon.pid).writtenBytes - writtenBefore) / 1024 / delivered;
        return {
          eventsPerS: inWindow / s.measureS,
          peakRssMB,
          kBPerEvent,
          transactionsPerS: load!.transactions / s.measureS,
          mainCpuMsPerTransaction: (1000 * cpu.mainS) / load!.transactions,
          cpuMsPerTransaction: (1000 * cpu.processS) / load!.transactions,
          note: failureNote([load!]),
        };
      },
      site,
    ),
  );

  ctx.figure({
    name: `${EVENTS_PER_S}${suffix}`,
    unit: 'events/s',
    chargegate: chargegate?.eventsPerS ?? null,
    baseline: naive?.eventsPerS ?? null,
    target: [
      { on: 'chargegate', op: '>=', value: 1000 },
      { on: 'ratio', op: '>=', value: 1.0 },
    ],
    ...(chargegate && {
      note: `${s.stations} stations, ${Math.round(chargegate.transactionsPerS)} transactions/s (3 events each), signature ${variant.text}${chargegate.note ? `; ${chargegate.note}` : ''}`,
    }),
  });
  ctx.figure({
    name: `main thread CPU per transaction${suffix}`,
    unit: 'ms',
    chargegate: chargegate?.mainCpuMsPerTransaction ?? null,
    ...(chargegate && {
      note: `the daemon's main thread's utime + stime over the measured window, per transaction completed in it (3 events each); the whole process: ${chargegate.cpuMsPerTransaction.toFixed(2)} ms`,
    }),
  });
  ctx.figure({
    name: `written to disk per delivered event${suffix}`,
    unit: 'KB',
    chargegate: chargegate?.kBPerEvent ?? null,
    baseline: naive?.kBPerEvent ?? null,
    target: [{ on: 'chargegate', op: '<=', value: 10 }],
    note: '/proc/PID/io write_bytes over the load and the drain after it, divided by the events delivered (the stored event is ~0.4 KB)',
  });
  ctx.figure({
    name: `RSS, peak${suffix}`,
    unit: 'MB',
    chargegate: chargegate?.peakRssMB ?? null,
    baseline: naive?.peakRssMB ?? null,
  });
  ctx.figure({
    name: `events/s delivered, share of the signing ceiling${suffix}`,
    unit: '%',
    chargegate: chargegate && naive ? (100 * chargegate.eventsPerS) / naive.signing.signsPerS : null,
    target: [{ on: 'chargegate', op: '>=', value: 70 }],
    note: 'events/s delivered during the load over the signatures/s this machine makes (the row below)',
  });
  ctx.figure({
    name: `webhook signatures/s, this machine${suffix}`,
    unit: 'signs/s',
    chargegate: naive?.signing.signsPerS ?? null,
    note: `the ceiling of any pipeline that signs each request: ${variant.text} with the keystore's webhook key (${naive?.signing.keyBits ? `${naive.signing.keyBits} bits` : 'Ed25519'}), 8 at a time, measured in this run`,
  });
}

/** CPU seconds the daemon's main thread and the whole process used between two nowMs() instants. */
async function cpuInWindow(pid: number, fromMs: number, toMs: number): Promise<{ mainS: number; processS: number }> {
  await sleepUntil(fromMs);
  const main = threadCpuS(pid);
  const whole = processStats(pid).cpuS;
  await sleepUntil(toMs);
  return { mainS: threadCpuS(pid) - main, processS: processStats(pid).cpuS - whole };
}

/** After the load: every committed delivery reaches the receiver, none dead. Throws with the counts otherwise. */
export async function drained(
  ctx: ScenarioContext,
  daemon: ChargegateProcess,
  receiver: WorkerHandle<ReceiverApi>,
): Promise<void> {
  const state = async () => ({
    outbox: outboxCounts(daemon.site.dataDir),
    received: await receiver.call('count', undefined),
  });
  await eventually(
    async () => {
      daemon.assertAlive();
      const { outbox, received } = await state();
      return (outbox.deliveriesByState.pending ?? 0) === 0 && received.distinct >= total(outbox.deliveriesByState);
    },
    ctx.settings.drainTimeoutS * 1000,
    async () => `not everything delivered: ${JSON.stringify(await state())}`,
    200,
  );
  const { outbox } = await state();
  if (outbox.deliveriesByState.dead)
    throw new Error(`${outbox.deliveriesByState.dead} deliveries went to the dead letters: ${daemon.logTail(5)}`);
}
