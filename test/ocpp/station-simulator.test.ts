import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS, siteWith, startTestDaemon, type TestDaemon } from '../support/daemon.js';

function simulate(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/station-simulator.ts'), ...args], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('scripts/station-simulator.ts', () => {
  let t: TestDaemon;
  afterEach(() => t.stop());

  it(
    'boots, authorizes, starts and stops one session: the outbox holds the four event types',
    async () => {
      t = await startTestDaemon(siteWith([{ id: 'partner-a', url: 'http://127.0.0.1:9/webhook/events' }]));
      const run = await simulate(['--url', t.url, '--id', 'CP001', '--id-tag', 'SIM-1']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('[CP001] BootNotification: Accepted');
      expect(run.stdout).toContain('[CP001] done');

      const events = t.events();
      expect(new Set(events.map((e) => e.eventType))).toEqual(new Set(['Authorize', 'ChargePointStatus', 'StartTransaction', 'StopTransaction']));
      const start = events.find((e) => e.eventType === 'StartTransaction')!.payload;
      const zonedTime = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0[12]:00$/);
      expect(start).toEqual({
        stationId: 'CP001',
        chargePointId: 'CP001-A',
        connectorId: 1,
        idTag: 'SIM-1',
        meterStart: 12.345,
        transactionId: expect.any(Number),
        startedAt: zonedTime,
      });
      expect(events.find((e) => e.eventType === 'StopTransaction')!.payload).toEqual({ ...start, meterStop: 19.845, reason: 'EVDisconnected', stoppedAt: zonedTime });
      expect(t.db.prepare("SELECT COUNT(*) AS n FROM deliveries WHERE webhook_id = 'partner-a'").get()).toEqual({ n: events.length });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'explains a refused or pending station and exits 1',
    async () => {
      t = await startTestDaemon(siteWith());
      const pending = await simulate(['--url', t.url, '--id', 'CP-UNKNOWN']);
      expect(pending.code).toBe(1);
      expect(pending.stdout).toContain('BootNotification: Pending');
      expect(pending.stderr).toContain('chargegate station pair');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
