import { startReceiver, type Receiver } from '../../../test/support/receiver.js';
import { nowMs } from '../measure.js';
import { serveWorker } from '../worker-protocol.js';

/** What the bench keeps of each webhook request: enough to count, deduplicate and time it. */
export interface Arrival {
  atMs: number;
  eventId: string;
  eventType: string;
  stationId: string | null;
  meterStart: number | null;
}

/**
 * The partner side of the pipeline scenarios, in its own process: the test support's webhook receiver, answering
 * 204 at once and noting each event's arrival on the machine-wide monotonic clock. It can go down (stop listening,
 * so attempts are refused like a dead endpoint's) and come back on the same port.
 */
const arrivals: Arrival[] = [];
let receiver: Receiver | undefined;
let port = 0;

export const receiverApi = {
  async up(payload: { port?: number }): Promise<{ port: number }> {
    if (payload.port !== undefined) port = payload.port;
    receiver ??= await startReceiver(
      (request) => {
        const atMs = nowMs();
        const envelope = request.json<{
          eventId: string;
          eventType: string;
          payload?: { stationId?: string; meterStart?: number };
        }>();
        arrivals.push({
          atMs,
          eventId: envelope.eventId,
          eventType: envelope.eventType,
          stationId: envelope.payload?.stationId ?? null,
          meterStart: envelope.payload?.meterStart ?? null,
        });
        return { status: 204 };
      },
      { port },
    );
    port = receiver.port;
    return { port };
  },
  async down(): Promise<void> {
    await receiver?.close();
    receiver = undefined;
  },
  reset(): void {
    arrivals.length = 0;
    receiver?.requests.splice(0);
  },
  arrivals(): Arrival[] {
    return arrivals;
  },
  /** Distinct events received so far (delivery is at-least-once, so a retry may repeat one). */
  count(): { requests: number; distinct: number } {
    return { requests: arrivals.length, distinct: new Set(arrivals.map((a) => a.eventId)).size };
  },
};

export type ReceiverApi = typeof receiverApi;

serveWorker(receiverApi);
