import { benchSite } from '../chargegate.js';
import { failureNote, Fleet, sidesNote, withBareOcppServer } from '../fleet.js';
import { stationIds } from '../identities.js';
import { nowMs, openFilesLimit, percentile, processStats } from '../measure.js';
import type { Scenario, ScenarioContext } from '../scenario.js';

interface CapacityRun {
  callsPerS: number;
  p50Ms: number | null;
  p99Ms: number | null;
  peakRssMB: number;
  connectS: number;
  note: string | undefined;
}

/**
 * 3. OCPP capacity: every station sends Heartbeat, StatusNotification and MeterValues in turn, closed loop, so the
 * server is saturated. Baseline: a bare ocpp-rpc strict-mode server answering the same calls with constants,
 * driven by the same generators.
 */
export const ocppCapacity: Scenario = {
  id: 3,
  title: 'OCPP capacity: stations sending Heartbeat, StatusNotification, MeterValues',
  async run(ctx) {
    const s = ctx.settings.capacity;
    ctx.describe({
      ...s,
      mix: 'Heartbeat, StatusNotification (unchanged status), MeterValues in turn, closed loop per station',
    });
    const limit = openFilesLimit();
    if (limit !== null && limit < s.stations + 1024)
      throw new Error(
        `the open-files limit (ulimit -n ${limit}) is too low for ${s.stations} stations; raise it to at least ${s.stations + 1024}`,
      );
    const identities = stationIds(s.stations);

    const bare = await ctx.side('baseline (bare ocpp-rpc)', () =>
      withBareOcppServer(ctx, (url, pid) => drive(ctx, url, identities, pid)),
    );
    const chargegate = await ctx.side('chargegate', () =>
      ctx.withChargegate({ sites: [benchSite({ stations: s.stations })] }, (daemon) =>
        drive(ctx, daemon.ocppUrl, identities, daemon.pid),
      ),
    );

    const note = sidesNote(chargegate?.note, bare?.note);
    ctx.figure({
      name: `calls/s answered, ${s.stations} stations`,
      unit: 'calls/s',
      chargegate: chargegate?.callsPerS ?? null,
      baseline: bare?.callsPerS ?? null,
      target: [{ on: 'ratio', op: '>=', value: 0.5 }],
      ...(note && { note }),
    });
    ctx.figure({
      name: 'call latency p50',
      unit: 'ms',
      chargegate: chargegate?.p50Ms ?? null,
      baseline: bare?.p50Ms ?? null,
    });
    ctx.figure({
      name: 'call latency p99',
      unit: 'ms',
      chargegate: chargegate?.p99Ms ?? null,
      baseline: bare?.p99Ms ?? null,
    });
    ctx.figure({
      name: 'server RSS, peak',
      unit: 'MB',
      chargegate: chargegate?.peakRssMB ?? null,
      baseline: bare?.peakRssMB ?? null,
      target: [{ on: 'chargegate', op: '<=', value: 300 }],
    });
    ctx.figure({
      name: `connect + boot ${s.stations} stations`,
      unit: 's',
      chargegate: chargegate?.connectS ?? null,
      baseline: bare?.connectS ?? null,
      note: `${s.connectConcurrency} upgrades at a time per generator, ${s.generators} generators`,
    });
  },
};

async function drive(ctx: ScenarioContext, url: string, identities: string[], serverPid: number): Promise<CapacityRun> {
  const s = ctx.settings.capacity;
  const fleet = await Fleet.connect(ctx, {
    url,
    identities,
    generators: s.generators,
    concurrency: s.connectConcurrency,
  });
  try {
    const startAtMs = nowMs() + 500;
    const results = await fleet.all((g) =>
      g.call('mix', { startAtMs, warmupMs: s.warmupS * 1000, measureMs: s.measureS * 1000 }),
    );
    const latencies = results.flatMap((r) => Array.from(r.latenciesMs));
    return {
      callsPerS: results.reduce((n, r) => n + r.completed, 0) / s.measureS,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      peakRssMB: processStats(serverPid).peakRssMB,
      connectS: fleet.connectS,
      note: failureNote(results),
    };
  } finally {
    await fleet.stop();
  }
}
