import { describe, expect, it } from 'vitest';
import { siteWith, daemonForTest } from '../support/daemon.js';
import { FakeCpo } from './fake-cpo.js';

describe('Authorize forwarded to the upstream CPO end to end', () => {
  it('a station Authorize reaches the CPO under the station identity; the answer goes back to the station and into the Authorize event', async () => {
    const cpo = await FakeCpo.startForTest();
    cpo.answers.set('ROAM-1', { status: 'Blocked' });
    const t = await daemonForTest({ ...siteWith(), upstream: { url: cpo.url, timeoutMs: 2000 } });
    const station = await t.connect();
    await station.boot();
    expect(await station.authorize('ROAM-1')).toEqual({ status: 'Blocked' });
    expect(cpo.identities).toEqual(['CP001']);
    expect(t.events('Authorize').map((e) => e.payload)).toEqual([
      { stationId: 'CP001', idTag: 'ROAM-1', status: 'Blocked', chargePointId: 'CP001-A' },
    ]);
  });
});
