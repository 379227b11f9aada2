import { benchSite, seedIdTags } from '../chargegate.js';
import { failureNote, Fleet, sidesNote, withBareOcppServer } from '../fleet.js';
import { stationIds, stationTag } from '../identities.js';
import { nowMs, percentile } from '../measure.js';
import type { Scenario, ScenarioContext } from '../scenario.js';

interface AuthorizeRun {
  p50Ms: number | null;
  p99Ms: number | null;
  calls: number;
  note: string | undefined;
}

/**
 * 4. Local Authorize: connected stations each send Authorize at a steady rate for a tag on the local list; the
 * round trip includes chargegate's decision chain and the Authorize event's commit. Baseline: bare ocpp-rpc
 * answering Accepted with a constant.
 */
export const localAuthorize: Scenario = {
  id: 4,
  title: 'Local Authorize round trip',
  async run(ctx) {
    const s = ctx.settings.authorize;
    ctx.describe({
      ...s,
      totalCallsPerS: s.stations * s.callsPerStationPerS,
      idTags: 'one Accepted tag per station on the local list',
      webhooks: 'none (delivery is scenarios 1, 2 and 5)',
    });
    const identities = stationIds(s.stations);

    const bare = await ctx.side('baseline (bare ocpp-rpc)', () =>
      withBareOcppServer(ctx, (url) => drive(ctx, url, identities)),
    );
    const chargegate = await ctx.side('chargegate', () => {
      const site = ctx.tempSite();
      seedIdTags(site, identities.map(stationTag));
      return ctx.withChargegate(
        { sites: [benchSite({ stations: s.stations })] },
        (daemon) => drive(ctx, daemon.ocppUrl, identities),
        site,
      );
    });

    const note = sidesNote(chargegate?.note, bare?.note);
    ctx.figure({
      name: `Authorize p50, ${s.stations} stations`,
      unit: 'ms',
      chargegate: chargegate?.p50Ms ?? null,
      baseline: bare?.p50Ms ?? null,
    });
    ctx.figure({
      name: `Authorize p99, ${s.stations} stations`,
      unit: 'ms',
      chargegate: chargegate?.p99Ms ?? null,
      baseline: bare?.p99Ms ?? null,
      target: [{ on: 'ratio', op: '<=', value: 2 }],
      ...(note && { note }),
    });
  },
};

async function drive(ctx: ScenarioContext, url: string, identities: string[]): Promise<AuthorizeRun> {
  const s = ctx.settings.authorize;
  const fleet = await Fleet.connect(ctx, { url, identities, generators: s.generators, concurrency: 25 });
  try {
    const startAtMs = nowMs() + 500;
    const results = await fleet.all((g) =>
      g.call('authorize', {
        startAtMs,
        warmupMs: s.warmupS * 1000,
        measureMs: s.measureS * 1000,
        callsPerStationPerS: s.callsPerStationPerS,
      }),
    );
    const latencies = results.flatMap((r) => Array.from(r.latenciesMs));
    return {
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      calls: latencies.length,
      note: failureNote(results),
    };
  } finally {
    await fleet.stop();
  }
}
