import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { spawnDaemonForTest, stationForTest, tempSiteForTest } from '../support/for-test.js';

/** The flood comes from another loopback address than the station and the checks that follow it. */
const ATTACKER = '127.0.0.2';
const FLOOD = 40;

/** Opens plain TCP connections from the attacker's address; resolves once each has connected or failed. */
async function openConnections(port: number, count: number): Promise<net.Socket[]> {
  const sockets = Array.from({ length: count }, () =>
    net.createConnection({ host: '127.0.0.1', port, localAddress: ATTACKER }),
  );
  for (const socket of sockets) socket.on('error', () => undefined).resume();
  await Promise.all(
    sockets.map(
      (s) => new Promise<void>((resolve) => (s.once('connect', () => resolve()), s.once('close', () => resolve()))),
    ),
  );
  return sockets;
}

describe('a flood of connections past the open-files limit', () => {
  it('does not end the daemon: once the flood is gone, /health answers and a station connects and boots', async () => {
    const site = tempSiteForTest({ log: { level: 'info' } });
    const { child, ready } = await spawnDaemonForTest(site.configPath, { readyTimeoutMs: 30_000 });
    // Lowered from outside, as a box with a small limit would have it: room for a few more sockets only.
    const open = readdirSync(`/proc/${child.pid}/fd`).length;
    execFileSync('prlimit', ['--pid', String(child.pid), `--nofile=${open + 8}`]);

    const flood = [
      ...(await openConnections(ready.ocppPort, FLOOD)),
      ...(await openConnections(ready.httpPort, FLOOD)),
    ];
    // Past the limit every accept fails (EMFILE): the daemon must neither end nor hold the connections it cannot serve.
    expect(readdirSync(`/proc/${child.pid}/fd`).length).toBeLessThan(open + FLOOD);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(child.exitCode).toBeNull();
    // The connections past the limit were accepted and closed at once (libuv's answer to EMFILE), not left waiting.
    expect(flood.filter((socket) => socket.readableEnded || socket.closed).length).toBeGreaterThan(FLOOD);
    await Promise.all(
      flood.map(
        (socket) =>
          new Promise((resolve) => (socket.closed ? resolve(undefined) : socket.destroy().once('close', resolve))),
      ),
    );

    // Still under the low limit: what the flood held is given back.
    const health = await fetch(`http://127.0.0.1:${ready.httpPort}/health`);
    expect(health.status).toBe(200);
    const station = await stationForTest(ready.ocppUrl, 'CP001');
    expect(await station.boot()).toMatchObject({ status: 'Accepted' });
    expect(child.exitCode).toBeNull();
  });
});
