import { METER_MODELS } from '../../../src/modbus/index.js';
import { MeterSimulator } from '../../../test/support/meter-simulator.js';
import { nowMs, sleepUntil } from '../measure.js';
import { serveWorker } from '../worker-protocol.js';

/**
 * Scenario 7's field and scenario 8's grid meter: SDM630 meters speaking real Modbus TCP, one loopback port each,
 * from the test support's simulator, in their own process so their cost is not the poller's.
 */
let meters: MeterSimulator[] = [];
/** When each meter was last set, on the wall clock its simulator stamps requests with. */
const setAtWallMs = new Map<number, number>();

const IDLE = { energyKWh: 1000, currentA: [0, 0, 0], powerW: 0 };
const CHARGING = { energyKWh: 1000, currentA: [16, 16, 16], powerW: 11_000 };

export const metersApi = {
  async start(payload: { count: number }): Promise<{ ports: number[] }> {
    meters = await Promise.all(
      Array.from({ length: payload.count }, () => MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } })),
    );
    await Promise.all(meters.map((m) => m.set(1, IDLE)));
    return { ports: meters.map((m) => m.port) };
  },
  /** Requests answered so far, per meter. */
  requests(): number[] {
    return meters.map((m) => m.requests.length);
  },
  /**
   * Every meter starts drawing current, one after another over spreadMs. Returns when each one did in epoch ms,
   * the clock the daemon stamps its events with.
   */
  async startCharging(payload: { atMs: number; spreadMs: number }): Promise<number[]> {
    return Promise.all(
      meters.map(async (meter, i) => {
        await sleepUntil(payload.atMs + (i * payload.spreadMs) / meters.length);
        await meter.set(1, CHARGING);
        return Date.now();
      }),
    );
  },
  /** One meter shows `currentA` on each phase from now on; returns when (nowMs, the clock the stations stamp with). */
  async set(payload: { index: number; currentA: number }): Promise<number> {
    const meter = meters[payload.index];
    if (!meter) throw new Error(`no meter ${payload.index}`);
    const a = payload.currentA;
    const at = nowMs();
    setAtWallMs.set(payload.index, Date.now());
    await meter.set(1, { currentA: [a, a, a], powerW: 3 * 230 * a });
    return at;
  },
  /**
   * When the first read of the phase currents that arrived after the meter was last set was answered (nowMs): the
   * reading that shows the change has left the meter. Undefined until then.
   */
  readingAfterSet(payload: { index: number }): number | undefined {
    const since = setAtWallMs.get(payload.index);
    const [current] = METER_MODELS.sdm630.currentA;
    const request = meters[payload.index]?.requests.find(
      (r) =>
        since !== undefined &&
        r.receivedAt >= since &&
        r.functionCode === current?.functionCode &&
        r.address <= current.address &&
        current.address < r.address + r.count,
    );
    if (request?.answeredAt === undefined) return undefined;
    return request.answeredAt + (nowMs() - Date.now());
  },
  async close(): Promise<void> {
    await Promise.all(meters.map((m) => m.close()));
    meters = [];
    setAtWallMs.clear();
  },
};

export type MetersApi = typeof metersApi;

serveWorker(metersApi);
