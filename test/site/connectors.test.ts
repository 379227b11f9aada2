import { describe, expect, it } from 'vitest';
import { siteFixture } from './site-fixture.js';

describe('connectors (site/connectors.ts)', () => {
  const t = siteFixture();

  it('a repeated connector status writes nothing: no event, and updated_at stays the time of the change', () => {
    let clock = new Date('2026-11-21T10:00:00.000Z');
    const site = t.rebuild({ now: () => clock });
    const row = () =>
      t.db.prepare('SELECT status, updated_at FROM connectors WHERE station_id = ? AND connector_id = 1').get('CP001');
    site.connectors.recordStationStatus('CP001', 1, 'Available', 'NoError');
    clock = new Date('2026-11-21T10:05:00.000Z');
    site.connectors.recordStationStatus('CP001', 1, 'Available', 'NoError');
    expect(row()).toEqual({ status: 'Available', updated_at: '2026-11-21T10:00:00.000Z' });
    site.connectors.recordStationStatus('CP001', 1, 'Available', 'NoError', { vendorErrorCode: 'E12' });
    expect(row()).toEqual({ status: 'Available', updated_at: '2026-11-21T10:05:00.000Z' });
    expect(t.events('ChargePointStatus')).toHaveLength(1);
  });

  it('a station-wide (connector 0) status emits one event per charge point, and only when it changed', () => {
    t.site.connectors.recordStationStatus('CP001', 0, 'Unavailable', 'NoError');
    t.site.connectors.recordStationStatus('CP001', 0, 'Unavailable', 'NoError');
    t.site.connectors.recordStationStatus('CP001', 0, 'Unavailable', 'NoError');
    expect(t.events('ChargePointStatus').map((e) => e.chargePointId)).toEqual(['CP001-A', 'CP001-B']);
    t.site.connectors.recordStationStatus('CP001', 0, 'Available', 'NoError');
    expect(t.events('ChargePointStatus').map((e) => [e.chargePointId, e.status])).toEqual([
      ['CP001-A', 'Unavailable'],
      ['CP001-B', 'Unavailable'],
      ['CP001-A', 'Available'],
      ['CP001-B', 'Available'],
    ]);
  });

  it('shows charge points with online state and the open transaction per connector', () => {
    t.site.stations.setOnline('CP001', true);
    t.site.connectors.recordStationStatus('CP001', 1, 'Charging', 'NoError');
    const tx = t.site.transactions.start({
      at: t.site.connectors.locate('CP001', 1),
      idTag: 'T',
      meterStartWh: 0,
      startedAt: new Date(),
      source: 'ocpp',
    });
    expect(t.site.connectors.chargePoints()).toEqual([
      {
        chargePointId: 'CP001-A',
        stationId: 'CP001',
        siteId: 's1',
        online: true,
        connectors: [{ connectorId: 1, status: 'Charging', errorCode: 'NoError', transactionId: tx.id }],
      },
      {
        chargePointId: 'CP001-B',
        stationId: 'CP001',
        siteId: 's1',
        online: true,
        connectors: [{ connectorId: 2, status: 'Unavailable', errorCode: 'NoError' }],
      },
    ]);
  });

  it('names the config entry to add for a connector a configured station does not list', () => {
    expect(t.site.connectors.unconfigured('CP001', 1)).toBeUndefined();
    expect(t.site.connectors.unconfigured('CP001', 0)).toBeUndefined();
    expect(t.site.connectors.unconfigured('CP001', 3)).toBe(
      'add connector 3 to a chargePoints entry of station CP001 (site s1) in the config',
    );
  });
});
