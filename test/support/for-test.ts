import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished, vi } from 'vitest';
import { startBystanderProbe, type BystanderProbe } from './bystander-probe.js';
import { exitOf, spawnDaemon, type SpawnedDaemon } from './cli.js';
import { openNotifySocket, type NotifySocket } from './notify-socket.js';
import { startReceiver, type Answer, type Receiver, type Responder } from './receiver.js';
import { connectStation, type SimulatedStation } from './station.js';
import { StationV201 } from './station-v201.js';
import { tempSite, type TempSite } from './temp-site.js';

/*
 * The test support's resources for the running test: each is released when the test finishes, passed or failed,
 * by the helper that made it (cleanup registered where the resource is made, not in a distant afterEach). Kept
 * apart from the plain helpers, which the bench's worker processes import outside vitest.
 */

/** An empty temporary directory (named chargegate-<purpose>-...), removed when the test finishes. */
export function tempDirForTest(purpose: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `chargegate-${purpose}-`));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Mounting a tmpfs needs root; CI runs as root, where the tests that need one must not be skipped. */
export const canMount = (): boolean => process.getuid?.() === 0 || process.env.CI === 'true';

/**
 * A tmpfs of `size` (mount's notation: 8m) on an empty temporary directory: a disk that fills up for real. Unmounted
 * and removed when the test finishes, after whatever the test put on it later (a daemon) has stopped.
 */
export function tmpfsForTest(size: string): string {
  const mountpoint = tempDirForTest('tmpfs');
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mountpoint]);
  onTestFinished(() => {
    execFileSync('umount', ['-l', mountpoint]);
  });
  return mountpoint;
}

/** A temporary site, removed when the test finishes. */
export function tempSiteForTest(overrides: Record<string, unknown> = {}): TempSite {
  const site = tempSite(overrides);
  onTestFinished(() => site.cleanup());
  return site;
}

/** A webhook receiver, closed when the test finishes. */
export async function receiverForTest(
  answer?: Responder | Answer,
  options?: { host?: string; port?: number },
): Promise<Receiver> {
  const receiver = await startReceiver(answer, options);
  onTestFinished(() => receiver.close());
  return receiver;
}

/** `chargegate run` as a child process (see spawnDaemon), killed when the test finishes if it still runs. */
export async function spawnDaemonForTest(...args: Parameters<typeof spawnDaemon>): Promise<SpawnedDaemon> {
  const spawned = await spawnDaemon(...args);
  onTestFinished(async () => {
    spawned.child.kill('SIGKILL');
    await exitOf(spawned.child);
  });
  return spawned;
}

/** A simulated OCPP 1.6 station (see connectStation), disconnected when the test finishes. */
export async function stationForTest(...args: Parameters<typeof connectStation>): Promise<SimulatedStation> {
  const station = await connectStation(...args);
  onTestFinished(async () => {
    await station.close().catch(() => undefined);
  });
  return station;
}

/** A simulated OCPP 2.0.1 station (see StationV201.connect), disconnected when the test finishes. */
export async function stationV201ForTest(...args: Parameters<typeof StationV201.connect>): Promise<StationV201> {
  const station = await StationV201.connect(...args);
  onTestFinished(async () => {
    await station.close().catch(() => undefined);
  });
  return station;
}

/** A socket standing in for systemd's NOTIFY_SOCKET, closed when the test finishes. */
export async function notifySocketForTest(): Promise<NotifySocket> {
  const socket = await openNotifySocket();
  onTestFinished(() => socket.close());
  return socket;
}

/** A bystander probe (see startBystanderProbe), killed when the test finishes if it still runs. */
export async function bystanderProbeForTest(...args: Parameters<typeof startBystanderProbe>): Promise<BystanderProbe> {
  const probe = await startBystanderProbe(...args);
  onTestFinished(() => probe.kill());
  return probe;
}

/**
 * Date, and only Date, under the test's hand while it keeps running with real time (timers and sockets stay real):
 * `vi.setSystemTime` moves the clock a deadline is read from. Real again when the test finishes.
 */
export function movableDateForTest(): void {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  onTestFinished(() => {
    vi.useRealTimers();
  });
}
