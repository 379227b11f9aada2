import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { exitOf } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';
import {
  notifySocketForTest,
  receiverForTest,
  spawnDaemonForTest,
  stationForTest,
  tempSiteForTest,
} from '../support/for-test.js';
import type { Receiver } from '../support/receiver.js';
import type { TempSite } from '../support/temp-site.js';

/** The daemon logs `chargegate ready` at info: the test sites log at warn by default. */
const INFO = { log: { level: 'info' } };

function logged(logs: string[], message: string): Array<Record<string, unknown>> {
  return logs
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === message);
}

function openDb(site: TempSite): BetterSqlite3.Database {
  return new BetterSqlite3(path.join(site.dataDir, 'chargegate.db'), { readonly: true, fileMustExist: true });
}

/** The test site `s1` with its station CP001 and a webhook to the receiver. */
function withWebhook(receiver: Receiver): Record<string, unknown> {
  return siteWith([{ id: 'late-partner', url: receiver.url(), events: ['ChargePointStatus'] }]);
}

describe('daemon lifecycle: systemd notifications, SIGHUP reload, SIGTERM stop', () => {
  it(
    'tells systemd READY and pings the watchdog; SIGTERM sends STOPPING, exits 0 and leaves a clean database',
    async () => {
      const notify = await notifySocketForTest();
      const site = tempSiteForTest(INFO);
      const started = await spawnDaemonForTest(site.configPath, {
        env: { NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '500000' },
      });
      const daemon = started.child;

      expect(await notify.waitFor('READY=1')).toContain(`MAINPID=${daemon.pid}`);
      const firstPing = await notify.waitFor('WATCHDOG=1');
      await notify.waitFor('WATCHDOG=1', { from: notify.messages.indexOf(firstPing) + 1 });

      daemon.kill('SIGTERM');
      expect(await exitOf(daemon)).toEqual({ code: 0, signal: null });
      await notify.waitFor('STOPPING=1');
      expect(logged(started.logs, 'chargegate stopped')).toHaveLength(1);

      expect(existsSync(path.join(site.dataDir, 'chargegate.db-wal'))).toBe(false);
      const db = openDb(site);
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        db.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'SIGHUP with a broken config refuses it with the key path and keeps serving on the old one',
    async () => {
      const notify = await notifySocketForTest();
      const site = tempSiteForTest(INFO);
      const started = await spawnDaemonForTest(site.configPath, { env: { NOTIFY_SOCKET: notify.path } });
      const daemon = started.child;
      await notify.waitFor('READY=1');
      const port = started.ready.httpPort;

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
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'SIGHUP adds a webhook without dropping the station, and names the changed keys that wait for a restart',
    async () => {
      const receiver = await receiverForTest();
      const site = tempSiteForTest(INFO);
      const started = await spawnDaemonForTest(site.configPath);
      const daemon = started.child;
      const station = await stationForTest(started.ready.ocppUrl, 'CP001');
      await station.boot();
      await station.statusNotification({ connectorId: 1, status: 'Available' });

      site.write({ ...INFO, http: { host: '127.0.0.1', port: 1 }, ...withWebhook(receiver) });
      daemon.kill('SIGHUP');
      await expect.poll(() => logged(started.logs, 'config reloaded').length, { timeout: 20_000 }).toBe(1);
      const [restart] = logged(started.logs, 'these config changes take effect only after a restart');
      expect(restart?.keys).toEqual(['http.port', 'http.issuer']);
      expect((await fetch(`http://127.0.0.1:${started.ready.httpPort}/health`)).status).toBe(200);

      // The same WebSocket as before the reload (the simulator never reconnects).
      await station.statusNotification({ connectorId: 1, status: 'Charging' });
      await receiver.waitForCount(1);
      const envelope = receiver.requests[0]!.json<{ eventType: string; payload: Record<string, unknown> }>();
      expect(envelope.eventType).toBe('ChargePointStatus');
      expect(envelope.payload).toMatchObject({
        stationId: 'CP001',
        chargePointId: 'CP001-A',
        connectorId: 1,
        status: 'Charging',
      });
      expect(logged(started.logs, 'chargegate ready')).toHaveLength(1);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'SIGTERM answers the OCPP call in progress and lets the webhook request in flight finish, then exits 0',
    async () => {
      const receiver = await receiverForTest({ status: 200, delayMs: 1500 });
      const site = tempSiteForTest();
      const marker = path.join(site.dir, 'plugin-called');
      const plugin = path.join(site.dir, 'slow-plugin.mjs');
      // An Authorize decision that takes a second: the call is still in progress when SIGTERM arrives.
      writeFileSync(
        plugin,
        `import { writeFileSync } from 'node:fs';
export async function authorize() {
  writeFileSync(${JSON.stringify(marker)}, 'called');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  return 'Accepted';
}
`,
      );
      site.write({ ...INFO, authorization: { plugin }, ...withWebhook(receiver) });
      const started = await spawnDaemonForTest(site.configPath);
      const daemon = started.child;
      const station = await stationForTest(started.ready.ocppUrl, 'CP001');
      await station.boot();

      await station.statusNotification({ connectorId: 2, status: 'Available' });
      await receiver.waitForCount(1);
      const authorized = station.authorize('TAG-1');
      await expect.poll(() => existsSync(marker), { timeout: 10_000 }).toBe(true);
      daemon.kill('SIGTERM');

      expect(await authorized).toMatchObject({ status: 'Accepted' });
      expect(await exitOf(daemon)).toEqual({ code: 0, signal: null });
      const db = openDb(site);
      try {
        const states = db
          .prepare(
            "SELECT d.state, e.event_type AS eventType FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE e.event_type = 'ChargePointStatus'",
          )
          .all();
        expect(states).toEqual([{ state: 'delivered', eventType: 'ChargePointStatus' }]);
      } finally {
        db.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
