import { connectStation } from './station.js';

/*
 * The bystander probe's own process (see bystander-probe.ts): a station of the site and a /health reader that time
 * every answer, far from the test process's busy event loop. Argument: the probe's options as JSON. Prints
 * `{"ready":true}` once its station has booted and, on SIGTERM or stdin's end, the slowest answers as one JSON line.
 */

const { httpPort, ocppUrl, identity, password, intervalMs } = JSON.parse(process.argv[2]!) as {
  httpPort: number;
  ocppUrl: string;
  identity: string;
  password?: string;
  intervalMs: number;
};

const station = await connectStation(ocppUrl, identity, password);
await station.boot();
const result = { slowestHealthMs: 0, slowestHeartbeatMs: 0, samples: 0 };
let stopping = false;

async function timed(f: () => Promise<unknown>): Promise<number> {
  const startedAt = performance.now();
  await f();
  return performance.now() - startedAt;
}

async function probe(): Promise<void> {
  while (!stopping) {
    const heartbeatMs = await timed(() => station.heartbeat());
    const healthMs = await timed(async () => {
      const response = await fetch(`http://127.0.0.1:${httpPort}/health`);
      await response.json();
    });
    result.slowestHeartbeatMs = Math.max(result.slowestHeartbeatMs, heartbeatMs);
    result.slowestHealthMs = Math.max(result.slowestHealthMs, healthMs);
    result.samples += 1;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

const probing = probe();
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

// A round in flight when told to stop still counts: a stall at the end of the flood is a stall.
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await probing;
  await station.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

process.once('SIGTERM', () => void stop());
process.stdin.on('end', () => void stop());
process.stdin.resume();
