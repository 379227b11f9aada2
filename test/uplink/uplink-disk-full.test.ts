import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS, siteWith } from '../support/daemon.js';
import { canMount, tmpfsForTest } from '../support/for-test.js';

const UPLINK_WAIT_MS = 30_000;

/** The tmpfs filled by a file until ENOSPC: SQLite's next page has nowhere to go. */
function fill(mountpoint: string): void {
  try {
    writeFileSync(path.join(mountpoint, 'filler'), Buffer.alloc(16 * 1024 * 1024));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
}

describe.runIf(canMount())('the uplink on a full disk (docs/design/uplink.md#uplink-what-the-csms-sees)', () => {
  it(
    "the CSMS's transaction id, learnt while the disk is full, is still the one its StopTransaction names",
    async () => {
      const mountpoint = tmpfsForTest('8m');
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({
        ...siteWith(),
        dataDir: path.join(mountpoint, 'var'),
        upstream: {
          timeoutMs: 2000,
          csms: { url: csms.url, securityProfile: 0, transactionMessageRetryIntervalS: 0.05 },
        },
      });
      const station = await t.connect();
      await station.boot();
      await eventually(
        () => t.logged('CSMS accepted the station: sending its queue').length > 0,
        UPLINK_WAIT_MS,
        'the link accepted',
      );
      await csms.cutOff();
      const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 100 });

      // The CSMS answers the start (its id 5001) while the disk is full: the batch writing that id fails.
      fill(mountpoint);
      csms.restore();
      await eventually(() => csms.of('StartTransaction').length === 1, UPLINK_WAIT_MS, 'the start upstream');
      await eventually(
        () => t.logs.some((l) => l.msg === 'uplink bookkeeping not written: kept for the next batch'),
        UPLINK_WAIT_MS,
        'the failed batch logged',
      );
      rmSync(path.join(mountpoint, 'filler'));

      await station.stopTransaction({ transactionId, meterStop: 900, reason: 'Local' });
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the stop upstream');
      expect(csms.of('StopTransaction')[0]).toMatchObject({ transactionId: 5001, meterStop: 900 });
      expect(csms.of('StartTransaction')).toHaveLength(1);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
