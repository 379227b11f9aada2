import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { CP001, siteWith, daemonForTest } from '../support/daemon.js';

const CP002 = { id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] };

/** Holds the database's write lock from another process (what a CLI command or a backup does) for holdMs. */
function holdWriteLock(databaseFile: string, holdMs: number): Promise<{ held: () => boolean; gone: Promise<void> }> {
  const script = `
    const db = new (require('better-sqlite3'))(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    console.log('locked');
    setTimeout(() => { db.exec('ROLLBACK'); db.close(); }, Number(process.argv[2]));`;
  const child = spawn(process.execPath, ['-e', script, databaseFile, String(holdMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let held = true;
  const gone = new Promise<void>((resolve) =>
    child.once('exit', () => {
      held = false;
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', () => resolve({ held: () => held, gone }));
    child.once('error', reject);
  });
}

/** Issue "Nothing acknowledged is ever lost": the write lock is never awaited on the event loop for long. */
describe('another process holding the write lock', () => {
  it('costs the writing call an InternalError it can retry, while the other stations keep being answered', async () => {
    const t = await daemonForTest(siteWith([], [CP001, CP002]));
    const writer = await t.connect('CP001');
    const other = await t.connect('CP002');
    await writer.boot();
    await other.boot();
    // Held for 5 s: a daemon that waited for it on the event loop would stall every station and then succeed.
    const lock = await holdWriteLock(`${t.temp.dataDir}/chargegate.db`, 5_000);
    await expect(writer.statusNotification({ connectorId: 1, status: 'Preparing' })).rejects.toMatchObject({
      rpcErrorCode: 'InternalError',
    });
    expect(await other.heartbeat()).toEqual({ currentTime: expect.any(String) });
    expect(lock.held()).toBe(true);
    await lock.gone;
    // The station retries, as OCPP stations do after a CALLERROR.
    await writer.statusNotification({ connectorId: 1, status: 'Preparing' });
    expect(t.events('ChargePointStatus').map((e) => e.payload.status)).toEqual(['Preparing']);
  });
});
