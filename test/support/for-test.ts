import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { spawnDaemon } from './cli.js';
import { startReceiver, type Answer, type Receiver, type Responder } from './receiver.js';
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

/** A temporary site, removed when the test finishes. */
export function tempSiteForTest(overrides: Record<string, unknown> = {}): TempSite {
  const site = tempSite(overrides);
  onTestFinished(() => site.cleanup());
  return site;
}

/** A webhook receiver, closed when the test finishes. */
export async function receiverForTest(answer?: Responder | Answer, options?: { host?: string; port?: number }): Promise<Receiver> {
  const receiver = await startReceiver(answer, options);
  onTestFinished(() => receiver.close());
  return receiver;
}

/** `chargegate run` as a child process (see spawnDaemon), killed when the test finishes if it still runs. */
export async function spawnDaemonForTest(...args: Parameters<typeof spawnDaemon>): Promise<{ child: ChildProcess; logs: string[] }> {
  const spawned = await spawnDaemon(...args);
  onTestFinished(() => {
    if (spawned.child.exitCode === null && spawned.child.signalCode === null) spawned.child.kill('SIGKILL');
  });
  return spawned;
}
