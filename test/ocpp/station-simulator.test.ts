import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ROOT } from '../support/cli.js';
import { putIdTag } from '../../src/authorization/index.js';
import { eventually, PROCESS_TEST_TIMEOUT_MS, siteWith, daemonForTest } from '../support/daemon.js';
import { startApiDaemon } from '../http/api-harness.js';

function simulate(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'scripts/station-simulator.ts'), ...args],
      { cwd: ROOT, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('scripts/station-simulator.ts', () => {
  it(
    'boots, authorizes, starts and stops one session: the outbox holds the four event types',
    async () => {
      const t = await daemonForTest(siteWith([{ id: 'partner-a', url: 'http://127.0.0.1:9/webhook/events' }]));
      const run = await simulate(['--url', t.url, '--id', 'CP001', '--id-tag', 'SIM-1']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('[CP001] BootNotification: Accepted');
      expect(run.stdout).toContain('[CP001] done');

      const events = t.events();
      expect(new Set(events.map((e) => e.eventType))).toEqual(
        new Set(['Authorize', 'ChargePointStatus', 'StartTransaction', 'StopTransaction']),
      );
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
      expect(events.find((e) => e.eventType === 'StopTransaction')!.payload).toEqual({
        ...start,
        meterStop: 19.845,
        reason: 'EVDisconnected',
        stoppedAt: zonedTime,
      });
      expect(t.db.prepare("SELECT COUNT(*) AS n FROM deliveries WHERE webhook_id = 'partner-a'").get()).toEqual({
        n: events.length,
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'explains a refused or pending station and exits 1',
    async () => {
      const t = await daemonForTest(siteWith());
      const pending = await simulate(['--url', t.url, '--id', 'CP-UNKNOWN']);
      expect(pending.code).toBe(1);
      expect(pending.stdout).toContain('BootNotification: Pending');
      expect(pending.stderr).toContain('chargegate station pair');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    '--stay keeps the station online and carries out the API remote start and stop, until SIGTERM',
    async () => {
      const api = await startApiDaemon();
      onTestFinished(() => api.stop());
      putIdTag(api.db, { idTag: 'API-TAG', status: 'Accepted', expiresAt: null, siteId: null });
      const token = await api.token(api.createApp('ops'));
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(ROOT, 'scripts/station-simulator.ts'),
          '--url',
          api.url,
          '--id',
          'CP001',
          '--stay',
        ],
        {
          cwd: ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const lines: string[] = [];
      createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
      const said = (text: string) =>
        eventually(() => lines.find((l) => l.includes(text)), 30_000, `"${text}" from the simulator`);
      try {
        await said('staying online for remote start and stop');
        expect(
          (
            await api.call('POST', '/charge-points/CP001-A/start', {
              token,
              body: { connectorId: 1, idTag: 'API-TAG' },
            })
          ).status,
        ).toBe(202);
        const started = await said('RemoteStartTransaction -> StartTransaction');
        const transactionId = Number(/transactionId (\d+)/.exec(started)![1]);
        expect(started).toContain('on connector 1, tag API-TAG');
        expect((await api.call('POST', '/charge-points/CP001-A/stop', { token, body: { transactionId } })).status).toBe(
          202,
        );
        await said(`RemoteStopTransaction -> StopTransaction: transactionId ${transactionId}`);
        expect(api.db.prepare('SELECT stop_reason FROM transactions WHERE id = ?').pluck().get(transactionId)).toBe(
          'Remote',
        );
        child.kill('SIGTERM');
        const [code] = (await once(child, 'exit')) as [number];
        expect(code).toBe(0);
        expect(lines.at(-1)).toBe('[CP001] done');
      } finally {
        child.kill('SIGKILL');
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
