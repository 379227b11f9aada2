import { benchSite, seedIdTags } from '../chargegate.js';
import { failureNote, Fleet } from '../fleet.js';
import { stationIds, stationTag } from '../identities.js';
import { nowMs, percentile } from '../measure.js';
import { waitFor, type Scenario } from '../scenario.js';
import { BACKLOG_ROOM } from './event-pipeline.js';
import type { ReceiverApi } from '../workers/receiver.js';

/**
 * 2. Latency at a steady 100 events/s: half StartTransaction, half StopTransaction, on a fixed timetable. Measured
 * from the station sending StartTransaction to the receiver getting its webhook; both processes read the same
 * machine-wide monotonic clock. No baseline: the target is absolute.
 */
export const steadyLatency: Scenario = {
  id: 2,
  title: 'Latency at a steady event rate: station StartTransaction to webhook received',
  async run(ctx) {
    const s = ctx.settings.latency;
    ctx.describe({ ...s, webhook: 'one, StartTransaction and StopTransaction', queueCapacity: BACKLOG_ROOM });
    const latencies = await ctx.side('chargegate', async () => {
      const receiver = await ctx.startWorker<ReceiverApi>('receiver');
      const { port } = await receiver.call('up', {});
      const identities = stationIds(s.stations);
      const site = ctx.tempSite();
      seedIdTags(site, identities.map(stationTag));
      const webhookUrl = `http://127.0.0.1:${port}/webhook/events`;
      const config = {
        sites: [benchSite({ stations: s.stations, webhookUrl, events: ['StartTransaction', 'StopTransaction'] })],
        webhookDelivery: { queueCapacity: BACKLOG_ROOM },
      };
      return ctx.withChargegate(
        config,
        async (daemon) => {
          const fleet = await Fleet.connect(ctx, { url: daemon.ocppUrl, identities, generators: 1, concurrency: 25 });
          const startAtMs = nowMs() + 300;
          const [load] = await fleet.all((g) => g.call('steady', { startAtMs, durationMs: (s.warmupS + s.measureS) * 1000, eventsPerS: s.eventsPerS }));
          await fleet.stop();
          const measured = load!.starts.filter((start) => start.sentAtMs >= startAtMs + s.warmupS * 1000);
          const arrivedAt = new Map<string, number>();
          await waitFor(
            async () => {
              for (const a of await receiver.call('arrivals', undefined)) if (a.eventType === 'StartTransaction') arrivedAt.set(`${a.stationId}:${a.meterStart}`, a.atMs);
              return measured.every((start) => arrivedAt.has(start.key));
            },
            ctx.settings.drainTimeoutS * 1000,
            () => `${measured.filter((start) => !arrivedAt.has(start.key)).length} of ${measured.length} StartTransaction webhooks never arrived`,
            200,
          );
          return { values: measured.map((start) => arrivedAt.get(start.key)! - start.sentAtMs), note: failureNote([load!]) };
        },
        site,
      );
    });

    const note = `${latencies?.values.length ?? 0} StartTransaction events timed${latencies?.note ? `; ${latencies.note}` : ''}`;
    ctx.figure({ name: `StartTransaction to webhook p50 at ${s.eventsPerS} events/s`, unit: 'ms', chargegate: latencies ? percentile(latencies.values, 50) : null });
    ctx.figure({
      name: `StartTransaction to webhook p99 at ${s.eventsPerS} events/s`,
      unit: 'ms',
      chargegate: latencies ? percentile(latencies.values, 99) : null,
      target: [{ on: 'chargegate', op: '<=', value: 20 }],
      note,
    });
  },
};
