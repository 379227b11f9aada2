import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { putIdTag } from '../../src/authorization/index.js';
import { daemonForTest, eventually, siteWith } from '../support/daemon.js';
import { canMount, tempDirForTest, tmpfsForTest } from '../support/for-test.js';

/**
 * Contract section 7, "Durability and time", with a full disk for real: the data directory on a small tmpfs
 * filled by a file until ENOSPC.
 */
describe.runIf(canMount())('a full disk', () => {
  function fill(mountpoint: string): void {
    try {
      writeFileSync(path.join(mountpoint, 'filler'), Buffer.alloc(16 * 1024 * 1024));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    }
  }

  it('answers a call whose commit fails with a CALLERROR, leaves nothing half-applied, reports critical, and works again once space returns', async () => {
    const mountpoint = tmpfsForTest('8m');
    const plugin = path.join(tempDirForTest('plugin'), 'slow-plugin.mjs');
    // The plugin passes after 200 ms: StopTransaction writes, then waits for it while its group commits (and fails).
    writeFileSync(
      plugin,
      'export function authorize() { return new Promise((resolve) => setTimeout(() => resolve(undefined), 200)); }\n',
    );
    const t = await daemonForTest({ ...siteWith(), dataDir: path.join(mountpoint, 'var'), authorization: { plugin } });
    putIdTag(t.db, { idTag: 'TAG-1', status: 'Accepted', expiresAt: null, siteId: null });
    const station = await t.connect('CP001');
    await station.boot();
    const tx = await station.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 1_000 });
    const health = async () => {
      const response = await fetch(`http://127.0.0.1:${t.daemon.httpPort}/health`);
      return {
        code: response.status,
        body: (await response.json()) as { status: string; storage: { status: string } },
      };
    };
    expect((await health()).code).toBe(200);

    fill(mountpoint);
    await expect(
      station.stopTransaction({ transactionId: tx, meterStop: 5_000, idTag: 'TAG-1' }),
    ).rejects.toMatchObject({ rpcErrorCode: 'InternalError' });
    await expect(station.startTransaction({ connectorId: 2, idTag: 'TAG-1', meterStart: 7_000 })).rejects.toMatchObject(
      { rpcErrorCode: 'InternalError' },
    );
    // Nothing half-applied: the transaction is open, no event of either call exists.
    expect(t.db.prepare('SELECT id, stopped_at FROM transactions ORDER BY id').all()).toEqual([
      { id: tx, stopped_at: null },
    ]);
    expect(t.events().map((e) => e.eventType)).toEqual(['StartTransaction', 'Authorize']);
    const critical = await eventually(
      async () => {
        const h = await health();
        return h.code === 503 ? h : undefined;
      },
      5_000,
      '/health critical',
    );
    expect(critical.body).toMatchObject({ status: 'critical', storage: { status: 'critical' } });

    // Space returns: the same station's retry works, with no restart.
    rmSync(path.join(mountpoint, 'filler'));
    expect(await station.stopTransaction({ transactionId: tx, meterStop: 5_000, idTag: 'TAG-1' })).toEqual({
      idTagInfo: { status: 'Accepted' },
    });
    expect(t.events('StopTransaction').map((e) => e.payload.transactionId)).toEqual([tx]);
    expect((await health()).code).toBe(200);
  });
});
