import { EVENT_TYPES } from '../../../src/config/index.js';
import { benchSite, seedIdTags, type ChargegateProcess } from '../chargegate.js';
import { failureNote, Fleet } from '../fleet.js';
import { stationIds, stationTag } from '../identities.js';
import { nowMs } from '../measure.js';
import { outboxCounts } from '../outbox-view.js';
import { freePort } from '../processes.js';
import { eventually } from '../../../test/support/eventually.js';
import type { Scenario, ScenarioContext } from '../scenario.js';
import type { ReceiverApi } from '../workers/receiver.js';
import { EVENTS_PER_S } from './event-pipeline.js';

/**
 * 5. Backlog drain: the partner endpoint is down while events of all four types queue (a full queue's worth each
 * at the issue's size); then it comes back. Measured from the first successful retry to the last delivery, and
 * judged against the time scenario 1's delivery rate implies for the same number of events.
 */
export const backlogDrain: Scenario = {
  id: 5,
  title: 'Backlog drain after the receiver comes back',
  async run(ctx) {
    const s = ctx.settings.backlog;
    const expected = s.eventsPerType * EVENT_TYPES.length;
    ctx.describe({ ...s, retryIntervalS: s.retryIntervalS, queueCapacity: 1000, events: expected });
    const drain = await ctx.side('chargegate', async () => {
      const receiver = await ctx.startWorker<ReceiverApi>('receiver');
      const port = await freePort();
      const identities = stationIds(s.stations);
      const site = ctx.tempSite();
      seedIdTags(site, identities.map(stationTag));
      const config = {
        sites: [benchSite({ stations: s.stations, webhookUrl: `http://127.0.0.1:${port}/webhook/events` })],
        webhookDelivery: { retryIntervalS: s.retryIntervalS, maxRetries: 100_000, queueCapacity: 1000 },
      };
      return ctx.withChargegate(
        config,
        async (daemon) => {
          await queueBacklog(ctx, daemon, identities);
          const upAtMs = nowMs();
          await receiver.call('up', { port });
          await eventually(
            async () => (daemon.assertAlive(), (await receiver.call('count', undefined)).distinct >= expected),
            ctx.settings.drainTimeoutS * 1000,
            async () =>
              `${(await receiver.call('count', undefined)).distinct} of ${expected} delivered; outbox ${JSON.stringify(outboxCounts(site.dataDir))}`,
            100,
          );
          const dead = outboxCounts(site.dataDir).deliveriesByState.dead ?? 0;
          if (dead > 0) throw new Error(`${dead} deliveries went to the dead letters`);
          const arrivals = await receiver.call('arrivals', undefined);
          const first = Math.min(...arrivals.map((a) => a.atMs));
          const last = Math.max(...arrivals.map((a) => a.atMs));
          return { drainS: (last - first) / 1000, firstAfterUpS: (first - upAtMs) / 1000 };
        },
        site,
      );
    });

    const pipelineRate = ctx.earlierFigure(1, EVENTS_PER_S)?.chargegate ?? null;
    ctx.figure({
      name: `drain ${expected} queued events`,
      unit: 's',
      chargegate: drain?.drainS ?? null,
      baseline: pipelineRate ? expected / pipelineRate : null,
      target: [{ on: 'ratio', op: '<=', value: 1.5 }],
      note: `first successful retry to last delivery; baseline = ${expected} events at scenario 1's delivery rate${pipelineRate ? ` (${pipelineRate} events/s)` : ' (not measured in this run)'}`,
    });
    const naiveRate = ctx.earlierFigure(1, EVENTS_PER_S)?.baseline ?? null;
    ctx.figure({
      name: 'drain rate',
      unit: 'events/s',
      chargegate: drain ? expected / drain.drainS : null,
      baseline: naiveRate,
      note: `for context, beside scenario 1's naive chain${naiveRate ? '' : ' (not measured in this run)'}: with no station load, delivery alone`,
    });
    ctx.figure({
      name: 'receiver back to first delivery',
      unit: 's',
      chargegate: drain?.firstAfterUpS ?? null,
      note: `bounded by retryIntervalS = ${s.retryIntervalS} s`,
    });
  },
};

/**
 * Makes exactly eventsPerType pending events of each type while the receiver is down, and waits until every queue
 * has met the dead endpoint. Transactions make StartTransaction, StopTransaction and the post-start Authorize; the
 * other two types are topped up to the same count, whatever else the daemon emitted on the way.
 */
async function queueBacklog(ctx: ScenarioContext, daemon: ChargegateProcess, identities: string[]): Promise<void> {
  const s = ctx.settings.backlog;
  const { dataDir } = daemon.site;
  const fleet = await Fleet.connect(ctx, { url: daemon.ocppUrl, identities, generators: 1, concurrency: 25 });
  const [transactions] = await fleet.all((g) => g.call('produce', { kind: 'transaction', count: s.eventsPerType }));
  const counts = outboxCounts(dataDir).eventsByType;
  const [authorizations] = await fleet.all((g) =>
    g.call('produce', { kind: 'authorize', count: s.eventsPerType - (counts.Authorize ?? 0) }),
  );
  const [statuses] = await fleet.all((g) =>
    g.call('produce', { kind: 'status', count: s.eventsPerType - (counts.ChargePointStatus ?? 0) }),
  );
  await fleet.stop();
  const queued = outboxCounts(dataDir);
  const wrong = EVENT_TYPES.filter((t) => queued.eventsByType[t] !== s.eventsPerType);
  if (wrong.length > 0 || queued.deliveriesByState.pending !== s.eventsPerType * EVENT_TYPES.length) {
    throw new Error(
      `expected ${s.eventsPerType} pending events of each type, found ${JSON.stringify(queued)}; ${failureNote([transactions!, authorizations!, statuses!]) ?? ''}`,
    );
  }
  await eventually(
    () => outboxCounts(dataDir).attemptedPending >= EVENT_TYPES.length,
    (s.retryIntervalS * 3 + 10) * 1000,
    () => JSON.stringify(outboxCounts(dataDir)),
  );
}
