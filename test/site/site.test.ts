import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig, type Config } from '../../src/config/index.js';
import { DomainError, Site } from '../../src/site/index.js';
import { openDatabase, type Database } from '../../src/store/index.js';
import { baseConfig, tempSite, type TempSite } from '../support/temp-site.js';

describe('Site (the domain)', () => {
  let temp: TempSite;
  let db: Database;
  let config: Config;
  let site: Site;
  let commits: number;
  const events = (type?: string) =>
    (db.prepare('SELECT event_type, payload FROM events ORDER BY seq').all() as Array<{ event_type: string; payload: string }>)
      .filter((r) => type === undefined || r.event_type === type)
      .map((r) => JSON.parse(r.payload) as Record<string, unknown>);

  beforeEach(() => {
    temp = tempSite();
    config = parseConfig(
      JSON.stringify({
        ...baseConfig(temp.dataDir),
        sites: [
          {
            id: 's1',
            stations: [
              {
                id: 'CP001',
                chargePoints: [
                  { id: 'CP001-A', connectors: [1] },
                  { id: 'CP001-B', connectors: [2] },
                ],
              },
            ],
            webhooks: [{ id: 'w', url: 'http://127.0.0.1:9/w' }],
          },
          { id: 's2' },
        ],
      }),
    );
    db = openDatabase(temp.dataDir);
    commits = 0;
    site = new Site({ db, config: () => config, onEventsCommitted: () => (commits += 1) });
  });
  afterEach(() => {
    db.close();
    temp.cleanup();
  });

  it('a repeated connector status writes nothing: no event, and updated_at stays the time of the change', () => {
    let clock = new Date('2026-11-21T10:00:00.000Z');
    site = new Site({ db, config: () => config, now: () => clock });
    const row = () => db.prepare('SELECT status, updated_at FROM connectors WHERE station_id = ? AND connector_id = 1').get('CP001');
    site.recordStationStatus('CP001', 1, 'Available', 'NoError');
    clock = new Date('2026-11-21T10:05:00.000Z');
    site.recordStationStatus('CP001', 1, 'Available', 'NoError');
    expect(row()).toEqual({ status: 'Available', updated_at: '2026-11-21T10:00:00.000Z' });
    site.recordStationStatus('CP001', 1, 'Available', 'NoError', { vendorErrorCode: 'E12' });
    expect(row()).toEqual({ status: 'Available', updated_at: '2026-11-21T10:05:00.000Z' });
    expect(events('ChargePointStatus')).toHaveLength(1);
  });

  it('a station-wide (connector 0) status emits one event per charge point, and only when it changed', () => {
    site.recordStationStatus('CP001', 0, 'Unavailable', 'NoError');
    site.recordStationStatus('CP001', 0, 'Unavailable', 'NoError');
    site.recordStationStatus('CP001', 0, 'Unavailable', 'NoError');
    expect(events('ChargePointStatus').map((e) => e.chargePointId)).toEqual(['CP001-A', 'CP001-B']);
    site.recordStationStatus('CP001', 0, 'Available', 'NoError');
    expect(events('ChargePointStatus').map((e) => [e.chargePointId, e.status])).toEqual([
      ['CP001-A', 'Unavailable'],
      ['CP001-B', 'Unavailable'],
      ['CP001-A', 'Available'],
      ['CP001-B', 'Available'],
    ]);
  });

  it('a Modbus-style start (no authorization status) emits StartTransaction alone; an OCPP one adds the post-start Authorize', () => {
    const at = site.locateConnector('CP001', 2);
    site.startTransaction({ at, idTag: 'MODBUS-1', meterStartWh: 500, startedAt: new Date(), source: 'modbus' });
    site.startTransaction({ at: site.locateConnector('CP001', 1), idTag: 'T', meterStartWh: 0, startedAt: new Date(), source: 'ocpp', authorizationStatus: 'Blocked' });
    expect(db.prepare('SELECT event_type FROM events ORDER BY seq').pluck().all()).toEqual(['StartTransaction', 'StartTransaction', 'Authorize']);
    expect(events('Authorize')).toEqual([{ stationId: 'CP001', idTag: 'T', status: 'Blocked', chargePointId: 'CP001-A', connectorId: 1 }]);
    expect(commits).toBe(2); // one notification per committed transaction, not per event
  });

  it("stops a transaction once, by its own station; an unknown, stopped or another station's id changes nothing and emits nothing", () => {
    const tx = site.startTransaction({ at: site.locateConnector('CP001', 1), idTag: 'T', meterStartWh: 1000, startedAt: new Date('2026-07-21T09:00:00.000Z'), source: 'ocpp' });
    expect(site.stopTransaction({ stationId: 'CP002', transactionId: tx.id, meterStopWh: 7000, stoppedAt: new Date(), reason: 'Remote' })).toBeUndefined();
    const stoppedAt = new Date('2026-07-21T10:30:00.000Z');
    expect(site.stopTransaction({ stationId: 'CP001', transactionId: tx.id, meterStopWh: 4000, stoppedAt, reason: 'Local' })).toMatchObject({ meter_stop_wh: 4000 });
    expect(site.stopTransaction({ stationId: 'CP001', transactionId: tx.id, meterStopWh: 9000, stoppedAt: new Date(), reason: 'Remote' })).toBeUndefined();
    expect(site.stopTransaction({ stationId: 'CP001', transactionId: 12345, meterStopWh: 1, stoppedAt: new Date() })).toBeUndefined();
    // Times in the site's zone (Europe/Brussels, summer time); the event happened when the station stopped.
    expect(events('StopTransaction')).toEqual([
      {
        stationId: 'CP001',
        chargePointId: 'CP001-A',
        connectorId: 1,
        idTag: 'T',
        meterStart: 1,
        meterStop: 4,
        transactionId: tx.id,
        startedAt: '2026-07-21T11:00:00.000+02:00',
        stoppedAt: '2026-07-21T12:30:00.000+02:00',
      },
    ]);
    expect(db.prepare("SELECT occurred_at FROM events WHERE event_type = 'StopTransaction'").pluck().get()).toBe(stoppedAt.toISOString());
  });

  it('shows charge points with online state and the open transaction per connector', () => {
    site.setOnline('CP001', true);
    site.recordStationStatus('CP001', 1, 'Charging', 'NoError');
    const tx = site.startTransaction({ at: site.locateConnector('CP001', 1), idTag: 'T', meterStartWh: 0, startedAt: new Date(), source: 'ocpp' });
    expect(site.chargePoints()).toEqual([
      {
        chargePointId: 'CP001-A',
        stationId: 'CP001',
        siteId: 's1',
        online: true,
        connectors: [{ connectorId: 1, status: 'Charging', errorCode: 'NoError', transactionId: tx.id }],
      },
      { chargePointId: 'CP001-B', stationId: 'CP001', siteId: 's1', online: true, connectors: [{ connectorId: 2, status: 'Unavailable', errorCode: 'NoError' }] },
    ]);
  });

  it('pairing refuses an unknown site or a configured station of another site; removed and blocked stations are rejected', () => {
    expect(() => site.pair('CP001', 's2')).toThrow(DomainError);
    expect(() => site.pair('CP-X', 'mars')).toThrow(/no site "mars"/);
    site.pair('CP-X', 's2');
    expect(site.admission('CP-X')).toMatchObject({ verdict: 'known', siteId: 's2' });
    site.setStationState('CP-X', 'removed');
    expect(site.admission('CP-X')).toEqual({ verdict: 'rejected', state: 'removed' });
    expect(site.boot('CP-X', {})).toBe('Rejected');
    expect(site.boot('CP-NEW', {})).toBe('Pending');
    expect(site.stations().find((s) => s.id === 'CP-NEW')).toMatchObject({ state: 'pending', siteId: null });
  });
});
