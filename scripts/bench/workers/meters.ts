import { METER_MODELS } from '../../../src/modbus/index.js';
import { MeterSimulator } from '../../../test/support/meter-simulator.js';
import { sleepUntil } from '../measure.js';
import { serveWorker } from '../worker-protocol.js';

/**
 * Scenario 7's field: SDM630 meters speaking real Modbus TCP, one loopback port each, from the test support's
 * simulator, in their own process so their cost is not the poller's.
 */
let meters: MeterSimulator[] = [];

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
  async close(): Promise<void> {
    await Promise.all(meters.map((m) => m.close()));
    meters = [];
  },
};

export type MetersApi = typeof metersApi;

serveWorker(metersApi);
