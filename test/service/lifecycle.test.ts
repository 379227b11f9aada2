import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnDaemon } from '../support/cli.js';
import { openNotifySocket, type NotifySocket } from '../support/notify-socket.js';
import { tempSite, type TempSite } from '../support/temp-site.js';

/** The daemon logs `chargegate ready` at info: the test sites log at warn by default. */
const INFO = { log: { level: 'info' } };

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

function logged(logs: string[], message: string): Array<Record<string, unknown>> {
  return logs.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === message);
}

function httpPortOf(logs: string[]): number {
  const [ready] = logged(logs, 'chargegate ready');
  return ready!.httpPort as number;
}

describe('daemon lifecycle under signals', () => {
  let site: TempSite | undefined;
  let daemon: ChildProcess | undefined;
  let notify: NotifySocket | undefined;

  afterEach(async () => {
    if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
      daemon.kill('SIGKILL');
      await exited(daemon);
    }
    daemon = undefined;
    await notify?.close();
    notify = undefined;
    site?.cleanup();
    site = undefined;
  });

  it('tells systemd READY and pings the watchdog; SIGTERM sends STOPPING, exits 0 and leaves a clean database', async () => {
    notify = await openNotifySocket();
    site = tempSite(INFO);
    const started = await spawnDaemon(site.configPath, { env: { NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '500000' } });
    daemon = started.child;

    expect(await notify.waitFor('READY=1')).toContain(`MAINPID=${daemon.pid}`);
    const firstPing = await notify.waitFor('WATCHDOG=1');
    await notify.waitFor('WATCHDOG=1', { from: notify.messages.indexOf(firstPing) + 1 });

    daemon.kill('SIGTERM');
    expect(await exited(daemon)).toEqual({ code: 0, signal: null });
    await notify.waitFor('STOPPING=1');
    expect(logged(started.logs, 'chargegate stopped')).toHaveLength(1);

    const dbFile = path.join(site.dataDir, 'chargegate.db');
    expect(existsSync(`${dbFile}-wal`)).toBe(false);
    const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });

  it('SIGHUP with a broken config refuses it with the key path and keeps serving on the old one', async () => {
    notify = await openNotifySocket();
    site = tempSite(INFO);
    const started = await spawnDaemon(site.configPath, { env: { NOTIFY_SOCKET: notify.path } });
    daemon = started.child;
    await notify.waitFor('READY=1');
    const port = httpPortOf(started.logs);

    site.write({ ...INFO, webhookDelivery: { retryIntervalS: -1 } });
    const from = notify.messages.length;
    daemon.kill('SIGHUP');
    await notify.waitFor('RELOADING=1', { from });
    await notify.waitFor('READY=1', { from });

    const [refused] = logged(started.logs, 'config reload refused; the running config stays');
    expect(refused?.err).toContain('webhookDelivery.retryIntervalS');
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    expect(daemon.exitCode).toBeNull();
  });

  it('SIGHUP applies a changed config at once and names the keys that wait for a restart', async () => {
    site = tempSite(INFO);
    const started = await spawnDaemon(site.configPath);
    daemon = started.child;

    site.write({ log: { level: 'debug' }, http: { host: '127.0.0.1', port: 1 } });
    daemon.kill('SIGHUP');
    await expect.poll(() => logged(started.logs, 'config reloaded').length, { timeout: 20_000 }).toBe(1);
    const [restart] = logged(started.logs, 'these config changes take effect only after a restart');
    expect(restart?.keys).toEqual(['http.port', 'http.issuer']);
    const health = await fetch(`http://127.0.0.1:${httpPortOf(started.logs)}/health`);
    expect(health.status).toBe(200);
  });
});
