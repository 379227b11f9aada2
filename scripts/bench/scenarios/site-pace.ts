import { benchSite, seedIdTags } from '../chargegate.js';
import { failureNote, Fleet } from '../fleet.js';
import { stationIds, stationTag } from '../identities.js';
import { nowMs, processStats, sleep } from '../measure.js';
import { checkpointWal } from '../outbox-view.js';
import type { WorkerHandle } from '../processes.js';
import type { Scenario, ScenarioContext } from '../scenario.js';
import type { ReceiverApi } from '../workers/receiver.js';
import type { StationsApi } from '../workers/stations.js';
import { sum, traceWrites, type WriteTrace } from '../write-trace.js';
import { BACKLOG_ROOM, drained } from './event-pipeline.js';

/** What one phase measured, over the events delivered in it. */
interface PhaseResult {
  eventsPerS: number;
  kBPerEvent: number;
  trace: WriteTrace | undefined;
  delivered: number;
  note: string | undefined;
}

/**
 * 9. What the daemon writes per event at a site's pace (issue 32). A site is never as busy as scenario 1: its
 * stations run sessions with pauses between them, so a commit rarely has company to share its fsync and its pages
 * with. Each phase runs on a fresh daemon with the default config (but scenario 1's queue room), one webhook taking
 * all four event types; bytes from /proc/PID/io write_bytes, fsyncs and positioned writes by file from strace, over
 * the load and the delivery of its backlog (bookkeeping and the checkpoint of its pages included), per event
 * delivered. Then events alone, as at a
 * quiet site, and scenario 1's kind of load, beside them.
 */
export const sitePace: Scenario = {
  id: 9,
  title: "Writes per event at a site's pace, beside a saturating load",
  async run(ctx) {
    const s = ctx.settings.sitePace;
    ctx.describe({
      ...s,
      load: `each station: Authorize, StartTransaction, ${s.meterValues} MeterValues ${s.meterIntervalS} s apart, StopTransaction, a pause; alone: one station's Authorize every ${s.lone.intervalS} s; saturated: StartTransaction then StopTransaction, closed loop`,
      webhook: 'one, all four event types, documented signature',
      queueCapacity: BACKLOG_ROOM,
      tracer: 'strace -f -y -e trace=fsync,fdatasync,pwrite64 attached to the daemon over the measured window',
    });
    const receiver = await ctx.startWorker<ReceiverApi>('receiver');
    const { port } = await receiver.call('up', {});
    const url = `http://127.0.0.1:${port}/webhook/events`;
    for (const phase of s.paced) {
      const name = `${phase.stations} stations, sessions with ${phase.pauseS} s pauses`;
      const result = await ctx.side(name, () =>
        measure(ctx, receiver, url, phase.stations, phase.measureS, (g, startAtMs) =>
          g.call('sessions', {
            startAtMs,
            durationMs: phase.measureS * 1000,
            meterValues: s.meterValues,
            meterIntervalMs: s.meterIntervalS * 1000,
            pauseMs: phase.pauseS * 1000,
          }),
        ),
      );
      figures(ctx, name, result);
    }
    const lone = `1 station, an Authorize every ${s.lone.intervalS} s`;
    figures(
      ctx,
      lone,
      await ctx.side(lone, () =>
        measure(ctx, receiver, url, 1, s.lone.measureS, (g, startAtMs) =>
          g.call('authorize', {
            startAtMs,
            warmupMs: 0,
            measureMs: s.lone.measureS * 1000,
            callsPerStationPerS: 1 / s.lone.intervalS,
          }),
        ),
      ),
    );
    const { stations, measureS } = s.saturated;
    const name = `${stations} stations, as fast as answers come`;
    const result = await ctx.side(name, () =>
      measure(ctx, receiver, url, stations, measureS, (g, startAtMs) =>
        g.call('pipeline', { startAtMs, warmupMs: 0, measureMs: measureS * 1000 }),
      ),
    );
    figures(ctx, name, result);
  },
};

/** One phase on a fresh daemon: load for measureS, every event delivered, stations still connected throughout. */
async function measure(
  ctx: ScenarioContext,
  receiver: WorkerHandle<ReceiverApi>,
  url: string,
  stations: number,
  measureS: number,
  load: (
    generator: WorkerHandle<StationsApi>,
    startAtMs: number,
  ) => Promise<{ errors: number; firstError: string | null }>,
): Promise<PhaseResult> {
  await receiver.call('reset', undefined);
  const identities = stationIds(stations);
  const site = ctx.tempSite();
  seedIdTags(site, identities.map(stationTag));
  const config = {
    sites: [benchSite({ stations, webhookUrl: url })],
    webhookDelivery: { queueCapacity: BACKLOG_ROOM },
  };
  return ctx.withChargegate(
    config,
    async (daemon) => {
      const fleet = await Fleet.connect(ctx, { url: daemon.ocppUrl, identities, generators: 1, concurrency: 25 });
      // The stations' first contact commits before the window, and the window starts from a checkpointed WAL.
      await sleep(1000);
      checkpointWal(daemon.site.dataDir);
      const trace = await traceWrites(daemon.pid);
      const writtenBefore = processStats(daemon.pid).writtenBytes;
      const startAtMs = nowMs() + 200;
      const [result] = await fleet.all((g) => load(g, startAtMs));
      const loadS = (nowMs() - startAtMs) / 1000;
      // Disconnecting writes each station's last-seen time: the stations stay until every event is delivered.
      await drained(ctx, daemon, receiver);
      const traced = await trace?.stop();
      const written = processStats(daemon.pid).writtenBytes - writtenBefore + checkpointWal(daemon.site.dataDir);
      await fleet.stop();
      const delivered = (await receiver.call('count', undefined)).distinct;
      return {
        eventsPerS: delivered / loadS,
        kBPerEvent: written / 1024 / delivered,
        trace: traced,
        delivered,
        note: failureNote([result!]),
      };
    },
    site,
  );
}

function figures(ctx: ScenarioContext, phase: string, result: PhaseResult | undefined): void {
  const per = (n: number) => (result ? n / result.delivered : 0);
  const trace = result?.trace;
  const wal = trace?.writes['chargegate.db-wal'];
  const db = trace?.writes['chargegate.db'];
  ctx.figure({
    name: `events/s delivered, ${phase}`,
    unit: 'events/s',
    chargegate: result?.eventsPerS ?? null,
    ...(result?.note && { note: result.note }),
  });
  ctx.figure({
    name: `written to disk per delivered event, ${phase}`,
    unit: 'KB',
    chargegate: result?.kBPerEvent ?? null,
    target: [{ on: 'chargegate', op: '<=', value: 10 }],
    note: "/proc/PID/io write_bytes of the daemon over the load and the delivery of its backlog, and the bench's own for checkpointing what the WAL still holds of it at the end (the daemon would later), over the events delivered",
  });
  ctx.figure({
    name: `fsyncs per delivered event, ${phase}`,
    unit: 'fsyncs',
    chargegate: trace ? per(sum(Object.values(trace.syncs))) : null,
    note: trace
      ? `fsync + fdatasync per event by file: ${describeSyncs(trace, per)}; pwrite64 per event: WAL ${per(wal?.calls ?? 0).toFixed(1)} (${(per(wal?.bytes ?? 0) / 1024).toFixed(1)} KB), database file ${per(db?.calls ?? 0).toFixed(1)} (${(per(db?.bytes ?? 0) / 1024).toFixed(1)} KB, checkpoints)`
      : 'strace unavailable on this machine (or not allowed to attach): fsyncs not counted',
  });
}

function describeSyncs(trace: WriteTrace, per: (n: number) => number): string {
  const files = Object.entries(trace.syncs);
  return files.length === 0 ? 'none' : files.map(([file, n]) => `${file} ${per(n).toFixed(2)}`).join(', ');
}
