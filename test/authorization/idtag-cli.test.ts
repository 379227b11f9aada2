import { describe, expect, it } from 'vitest';
import { runCli, runCliJson } from '../support/cli.js';
import { tempSite } from '../support/temp-site.js';
import { PROCESS_TEST_TIMEOUT_MS, siteWith, daemonForTest } from '../support/daemon.js';

describe('chargegate idtag', () => {
  it(
    'add/list/remove take effect at once in a running daemon that is writing transactions to the same database',
    async () => {
      const t = await daemonForTest(siteWith());
      const config = ['--config', t.temp.configPath];
      const station = await t.connect();
      await station.boot();
      expect(await station.authorize('CARD-1')).toEqual({ status: 'Invalid' });

      // The daemon keeps committing sessions while the CLI, another process, writes the list.
      let sessions = 0;
      let streaming = true;
      const traffic = (async () => {
        while (streaming) {
          const transactionId = await station.startTransaction({ connectorId: 2, idTag: 'FLEET', meterStart: 0 });
          await station.stopTransaction({ transactionId, meterStop: 10 });
          sessions += 1;
        }
      })();
      const added = await runCliJson([
        'idtag',
        'add',
        'CARD-1',
        '--expires',
        '2099-12-31T23:00:00+01:00',
        '--site',
        's1',
        ...config,
      ]);
      streaming = false;
      await traffic;
      expect(sessions).toBeGreaterThan(0);
      expect(added).toMatchObject({
        code: 0,
        data: { idTag: 'CARD-1', status: 'Accepted', expiresAt: '2099-12-31T22:00:00.000Z', siteId: 's1' },
      });
      expect(await station.authorize('CARD-1')).toEqual({ status: 'Accepted', expiryDate: '2099-12-31T22:00:00.000Z' });

      const listed = await runCliJson<{ idTags: unknown[] }>(['idtag', 'list', ...config]);
      expect(listed.data.idTags).toEqual([
        expect.objectContaining({
          idTag: 'CARD-1',
          status: 'Accepted',
          expiresAt: '2099-12-31T22:00:00.000Z',
          siteId: 's1',
        }),
      ]);

      expect((await runCli(['idtag', 'remove', 'CARD-1', ...config])).code).toBe(0);
      expect(await station.authorize('CARD-1')).toEqual({ status: 'Invalid' });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'refuses bad input with exit 2 and a precise message',
    async () => {
      const temp = tempSite();
      try {
        const config = ['--config', temp.configPath];
        const [tooLong, badDate, missing] = await Promise.all([
          runCli(['idtag', 'add', 'X'.repeat(21), ...config]),
          runCli(['idtag', 'add', 'T', '--expires', 'next tuesday', '--site', 's1', ...config]),
          runCli(['idtag', 'remove', 'NOT-THERE', ...config]),
        ]);
        expect(tooLong).toMatchObject({ code: 2, stderr: expect.stringContaining('tag: must be 1 to 20 characters') });
        expect(badDate).toMatchObject({
          code: 2,
          stderr: expect.stringContaining('--expires: "next tuesday" is not an ISO 8601 date-time'),
        });
        expect(missing).toMatchObject({ code: 1, stderr: expect.stringContaining('no tag "NOT-THERE"') });
      } finally {
        temp.cleanup();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
