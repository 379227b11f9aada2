import type { SetChargingProfileRequest } from '../../../src/ocpp/index.js';
import { connectStation, type SimulatedStation } from '../../../test/support/station.js';
import { stationTag } from '../identities.js';
import { nowMs, sleep, sleepUntil } from '../measure.js';
import { serveWorker } from '../worker-protocol.js';

/**
 * An OCPP load generator: a share of the bench's stations, each a strict-mode ocpp-rpc client (the test support's
 * simulated station), driven in the patterns the scenarios need. The same generator drives chargegate and the
 * bare ocpp-rpc baseline, so its own cost is the same on both sides.
 */
let stations: SimulatedStation[] = [];
/** Scenario 8: when each station received a TxProfile (nowMs) and its limit, by station identity. */
const profileArrivals = new Map<string, Array<{ atMs: number; limitA: number }>>();

/** Failed calls: counted, and the first one kept to say what went wrong. */
class Failures {
  count = 0;
  first: string | null = null;

  record(err: unknown, what: string): void {
    this.count += 1;
    this.first ??= `${what}: ${err instanceof Error ? err.message : String(err)}`;
  }

  report(): { errors: number; firstError: string | null } {
    return { errors: this.count, firstError: this.first };
  }
}

/** A measured phase: starts at an instant shared by all generators, records only inside its window. */
interface Window {
  startAtMs: number;
  warmupMs: number;
  measureMs: number;
}

function windowBounds(w: Window): { from: number; to: number } {
  return { from: w.startAtMs + w.warmupMs, to: w.startAtMs + w.warmupMs + w.measureMs };
}

/** Runs fn on every item, `concurrency` at a time. */
async function forEachLimited<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

/** The meter register value for cycle k: kWh = k in the webhook payload, so the receiver can tell cycles apart. */
function cycleMeterWh(k: number): number {
  return k * 1000;
}

/** Closed loop: the next call goes as soon as the answer to the last one is back. */
async function closedLoop(
  w: Window,
  callsOf: (station: SimulatedStation, n: number) => Promise<unknown>,
  failures: Failures,
): Promise<{ completed: number; latenciesMs: Float64Array }> {
  const { from, to } = windowBounds(w);
  const latencies: number[] = [];
  let completed = 0;
  await sleepUntil(w.startAtMs);
  await Promise.all(
    stations.map(async (station) => {
      for (let n = 0; nowMs() < to; n++) {
        const sentAt = nowMs();
        try {
          await callsOf(station, n);
        } catch (err) {
          failures.record(err, station.identity);
          await sleep(100);
          continue;
        }
        const doneAt = nowMs();
        if (doneAt >= from && doneAt <= to) completed += 1;
        // Every call sent in the window counts, also one answered after it: the slowest must not escape.
        if (sentAt >= from && sentAt <= to) latencies.push(doneAt - sentAt);
      }
    }),
  );
  return { completed, latenciesMs: Float64Array.from(latencies) };
}

const MIX = ['Heartbeat', 'StatusNotification', 'MeterValues'] as const;

export const stationsApi = {
  /**
   * Connects (and boots) the given identities, spreading the upgrades so a car park reconnecting is gradual.
   * `recordProfiles`: each station notes when a TxProfile reaches it (scenario 8), before it is handled.
   */
  async connect(payload: {
    url: string;
    identities: string[];
    concurrency: number;
    recordProfiles?: boolean;
  }): Promise<{ connected: number; seconds: number; errors: number; firstError: string | null }> {
    const failures = new Failures();
    const startedAt = nowMs();
    await forEachLimited(payload.identities, payload.concurrency, async (identity) => {
      try {
        // Scenario 8's grid meter reads the other load alone: its cars draw nothing, so what a station reports when
        // load management asks (TriggerMessage MeterValues) agrees with the meter.
        const station = await connectStation(payload.url, identity, undefined, {
          callTimeoutMs: 60_000,
          carDemandA: 0,
        });
        if (payload.recordProfiles) recordProfiles(station);
        const boot = await station.boot();
        if (boot.status !== 'Accepted') throw new Error(`BootNotification ${boot.status}`);
        stations.push(station);
      } catch (err) {
        failures.record(err, identity);
      }
    });
    return { connected: stations.length, seconds: (nowMs() - startedAt) / 1000, ...failures.report() };
  },

  /** Scenario 7's idle site: every station sends a Heartbeat every intervalMs for durationMs, and nothing else. */
  async heartbeats(payload: {
    intervalMs: number;
    durationMs: number;
  }): Promise<{ sent: number; errors: number; firstError: string | null }> {
    const failures = new Failures();
    const startedAt = nowMs();
    let sent = 0;
    await Promise.all(
      stations.map(async (station) => {
        for (let n = 0; n * payload.intervalMs < payload.durationMs; n++) {
          await sleepUntil(startedAt + n * payload.intervalMs);
          try {
            await station.heartbeat();
            sent += 1;
          } catch (err) {
            failures.record(err, station.identity);
          }
        }
      }),
    );
    return { sent, ...failures.report() };
  },

  /** Scenario 1: every station starts and stops transactions back to back. */
  async pipeline(payload: Window): Promise<{ transactions: number; errors: number; firstError: string | null }> {
    const failures = new Failures();
    const { completed } = await closedLoop(
      payload,
      async (station, n) => {
        const transactionId = await station.startTransaction({
          connectorId: 1,
          idTag: stationTag(station.identity),
          meterStart: cycleMeterWh(n + 1),
        });
        await station.stopTransaction({ transactionId, meterStop: cycleMeterWh(n + 1) + 500 });
      },
      failures,
    );
    return { transactions: completed, ...failures.report() };
  },

  /**
   * Scenario 2: a steady total rate of Start and Stop calls (half each), open loop on a fixed timetable. Returns
   * when each StartTransaction was due, keyed `station:kWh` like the receiver's arrivals.
   */
  async steady(payload: {
    startAtMs: number;
    durationMs: number;
    eventsPerS: number;
  }): Promise<{ starts: Array<{ key: string; sentAtMs: number }>; errors: number; firstError: string | null }> {
    const failures = new Failures();
    const starts: Array<{ key: string; sentAtMs: number }> = [];
    // Each station sends one Start and one Stop per period; the stations' phases are spread evenly over it.
    const periodMs = (2 * stations.length * 1000) / payload.eventsPerS;
    const end = payload.startAtMs + payload.durationMs;
    await Promise.all(
      stations.map(async (station, i) => {
        for (let k = 1; ; k++) {
          const startAt = payload.startAtMs + (k - 1) * periodMs + (i * periodMs) / stations.length;
          if (startAt >= end) return;
          await sleepUntil(startAt);
          try {
            const transactionId = await station.startTransaction({
              connectorId: 1,
              idTag: stationTag(station.identity),
              meterStart: cycleMeterWh(k),
            });
            // The timetable's instant, not the actual send: a station held back by a slow answer must not hide the
            // delay.
            starts.push({ key: `${station.identity}:${k}`, sentAtMs: startAt });
            await sleepUntil(startAt + periodMs / 2);
            await station.stopTransaction({ transactionId, meterStop: cycleMeterWh(k) + 500 });
          } catch (err) {
            failures.record(err, station.identity);
          }
        }
      }),
    );
    return { starts, ...failures.report() };
  },

  /**
   * Scenario 9: charging sessions at a site's pace, one after another on every station: Authorize, StartTransaction,
   * `meterValues` MeterValues `meterIntervalMs` apart, StopTransaction, then a pause. The stations' sessions are
   * spread evenly over the first session's length, as cars do not all arrive at once. Returns the sessions ended.
   */
  async sessions(payload: {
    startAtMs: number;
    durationMs: number;
    meterValues: number;
    meterIntervalMs: number;
    pauseMs: number;
  }): Promise<{ sessions: number; errors: number; firstError: string | null }> {
    const failures = new Failures();
    const end = payload.startAtMs + payload.durationMs;
    const sessionMs = (payload.meterValues + 1) * payload.meterIntervalMs + payload.pauseMs;
    let sessions = 0;
    await Promise.all(
      stations.map(async (station, i) => {
        await sleepUntil(payload.startAtMs + (i * sessionMs) / stations.length);
        const idTag = stationTag(station.identity);
        for (let k = 1; nowMs() < end; k++) {
          try {
            await station.authorize(idTag);
            const transactionId = await station.startTransaction({
              connectorId: 1,
              idTag,
              meterStart: cycleMeterWh(k),
            });
            for (let m = 1; m <= payload.meterValues; m++) {
              await sleep(payload.meterIntervalMs);
              await station.meterValues({ connectorId: 1, transactionId, wh: cycleMeterWh(k) + 100 * m });
            }
            await sleep(payload.meterIntervalMs);
            await station.stopTransaction({ transactionId, meterStop: cycleMeterWh(k) + 500 });
            sessions += 1;
          } catch (err) {
            failures.record(err, station.identity);
          }
          await sleep(payload.pauseMs);
        }
      }),
    );
    return { sessions, ...failures.report() };
  },

  /** Scenario 3: Heartbeat, StatusNotification and MeterValues in turn, closed loop on every station. */
  async mix(
    payload: Window,
  ): Promise<{ completed: number; latenciesMs: Float64Array; errors: number; firstError: string | null }> {
    const failures = new Failures();
    const result = await closedLoop(
      payload,
      (station, n) => {
        const action = MIX[n % MIX.length]!;
        if (action === 'Heartbeat') return station.heartbeat();
        if (action === 'StatusNotification') return station.statusNotification({ connectorId: 1, status: 'Available' });
        return station.meterValues({ connectorId: 1, wh: 1000 + n });
      },
      failures,
    );
    return { ...result, ...failures.report() };
  },

  /** Scenario 4: each station sends Authorize at a fixed rate (open loop, phases spread). */
  async authorize(
    payload: Window & { callsPerStationPerS: number },
  ): Promise<{ latenciesMs: Float64Array; errors: number; firstError: string | null }> {
    const failures = new Failures();
    const { from, to } = windowBounds(payload);
    const periodMs = 1000 / payload.callsPerStationPerS;
    const latencies: number[] = [];
    await Promise.all(
      stations.map(async (station, i) => {
        for (let n = 0; ; n++) {
          const at = payload.startAtMs + n * periodMs + (i * periodMs) / stations.length;
          if (at >= to) return;
          await sleepUntil(at);
          try {
            const { status } = await station.authorize(stationTag(station.identity));
            // A tag the server does not accept would time a different path than the local list's.
            if (status !== 'Accepted') throw new Error(`Authorize answered ${status}`);
          } catch (err) {
            failures.record(err, station.identity);
            continue;
          }
          // From the timetable, not the actual send: a station held back by a slow answer must not hide the delay.
          if (at >= from) latencies.push(nowMs() - at);
        }
      }),
    );
    return { latenciesMs: Float64Array.from(latencies), ...failures.report() };
  },

  /**
   * Scenario 5: exactly `count` operations spread over the stations, each making events of one kind:
   * a transaction (Start, then Stop), an Authorize, or a connector status change.
   */
  async produce(payload: {
    kind: 'transaction' | 'authorize' | 'status';
    count: number;
  }): Promise<{ done: number; errors: number; firstError: string | null }> {
    const failures = new Failures();
    let done = 0;
    await Promise.all(
      stations.map(async (station, i) => {
        const share = Math.floor(payload.count / stations.length) + (i < payload.count % stations.length ? 1 : 0);
        for (let n = 0; n < share; n++) {
          try {
            if (payload.kind === 'transaction') {
              const transactionId = await station.startTransaction({
                connectorId: 1,
                idTag: stationTag(station.identity),
              });
              await station.stopTransaction({ transactionId });
            } else if (payload.kind === 'authorize') {
              await station.authorize(stationTag(station.identity));
            } else {
              await station.statusNotification({ connectorId: 1, status: statusAfter(station.identity) });
            }
            done += 1;
          } catch (err) {
            failures.record(err, station.identity);
          }
        }
      }),
    );
    return { done, ...failures.report() };
  },

  /** Scenario 8: a car on every station's connector 1, charging from now on. */
  async charge(): Promise<{ errors: number; firstError: string | null }> {
    const failures = new Failures();
    await Promise.all(
      stations.map(async (station) => {
        try {
          await station.startTransaction({ connectorId: 1, idTag: stationTag(station.identity) });
        } catch (err) {
          failures.record(err, station.identity);
        }
      }),
    );
    return failures.report();
  },

  /** Scenario 8: the TxProfiles that reached each station at or after sinceMs, by identity. */
  profilesSince(payload: { sinceMs: number }): Record<string, Array<{ atMs: number; limitA: number }>> {
    return Object.fromEntries(
      [...profileArrivals].map(([identity, arrivals]) => [identity, arrivals.filter((a) => a.atMs >= payload.sinceMs)]),
    );
  },

  async close(): Promise<void> {
    await Promise.allSettled(stations.map((s) => s.close()));
    stations = [];
    profileArrivals.clear();
  },
};

/** Notes each TxProfile as its frame arrives, before the station handles it: what "sent to the station" means here. */
function recordProfiles(station: SimulatedStation): void {
  const arrivals: Array<{ atMs: number; limitA: number }> = [];
  profileArrivals.set(station.identity, arrivals);
  station.rpc.on('message', ({ message, outbound }) => {
    if (outbound || !message.includes('"SetChargingProfile"')) return;
    const atMs = nowMs();
    const [type, , action, params] = JSON.parse(message) as [number, string, string, SetChargingProfileRequest];
    const profile = params.csChargingProfiles;
    if (type !== 2 || action !== 'SetChargingProfile' || profile.chargingProfilePurpose !== 'TxProfile') return;
    const limitA = profile.chargingSchedule.chargingSchedulePeriod[0]?.limit;
    if (limitA !== undefined) arrivals.push({ atMs, limitA });
  });
}

const lastStatus = new Map<string, string>();

/** Alternates a connector between Available and Preparing: every notification is a change, so one event each. */
function statusAfter(identity: string): string {
  const next = lastStatus.get(identity) === 'Preparing' ? 'Available' : 'Preparing';
  lastStatus.set(identity, next);
  return next;
}

export type StationsApi = typeof stationsApi;

serveWorker(stationsApi);
