import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { nowMs } from '../measure.js';
import { serveWorker } from '../worker-protocol.js';

/** What the receiver keeps of each webhook request: enough to count, deduplicate and time it. */
export interface Arrival {
  atMs: number;
  eventId: string;
  eventType: string;
  stationId: string | null;
  meterStart: number | null;
}

/**
 * The partner side of the pipeline scenarios: a loopback HTTP receiver in its own process that answers 204 at once.
 * It can go down (stop listening, so requests are refused like a dead endpoint) and come back on the same port.
 */
const arrivals: Arrival[] = [];
const sockets = new Set<Socket>();
let port = 0;

const server: Server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const atMs = nowMs();
    try {
      const envelope = JSON.parse(Buffer.concat(chunks).toString()) as { eventId: string; eventType: string; payload?: { stationId?: string; meterStart?: number } };
      arrivals.push({ atMs, eventId: envelope.eventId, eventType: envelope.eventType, stationId: envelope.payload?.stationId ?? null, meterStart: envelope.payload?.meterStart ?? null });
      res.writeHead(204).end();
    } catch {
      res.writeHead(400).end();
    }
  });
});
server.keepAliveTimeout = 60_000;
server.on('connection', (socket: Socket) => {
  sockets.add(socket);
  socket.once('close', () => sockets.delete(socket));
});

async function listen(): Promise<void> {
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as { port: number }).port;
}

export const receiverApi = {
  async up(payload: { port?: number }): Promise<{ port: number }> {
    if (payload.port !== undefined) port = payload.port;
    if (!server.listening) await listen();
    return { port };
  },
  /** Refuses connections from now on and drops open ones, as a partner endpoint that went away. */
  async down(): Promise<void> {
    if (!server.listening) return;
    const closed = once(server, 'close');
    server.close();
    for (const socket of sockets) socket.destroy();
    await closed;
  },
  reset(): void {
    arrivals.length = 0;
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
