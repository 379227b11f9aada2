import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reaches, reachScope, type Grant } from '../../src/applications/index.js';
import { transactionHistory } from '../../src/site/index.js';
import { openDatabase, type Database } from '../../src/store/index.js';
import { tempDirForTest } from '../support/for-test.js';

const SITES = ['s1', 's2', 's3'];
const STATIONS = ['ST1', 'ST2', 'ST3', 'ST4'];
const CHARGE_POINTS = ['CP1', 'CP2', 'CP3', 'CP4', 'CP5'];

function insertTransaction(
  db: Database,
  at: { siteId: string; stationId: string; chargePointId: string },
  startedAt: string,
): number {
  return Number(
    db
      .prepare(
        `INSERT INTO transactions (site_id, station_id, charge_point_id, connector_id, id_tag, meter_start_wh, started_at, source)
         VALUES (?, ?, ?, 1, 'TAG-1', 0, ?, 'ocpp')`,
      )
      .run(at.siteId, at.stationId, at.chargePointId, startedAt).lastInsertRowid,
  );
}

const location = fc.record({
  siteId: fc.constantFrom(...SITES),
  stationId: fc.constantFrom(...STATIONS),
  chargePointId: fc.constantFrom(...CHARGE_POINTS),
});

const grant: fc.Arbitrary<Grant> = fc
  .oneof(
    fc.record({ level: fc.constant('company' as const), target: fc.constantFrom('acme', 'other') }),
    fc.record({ level: fc.constant('site' as const), target: fc.constantFrom(...SITES) }),
    fc.record({ level: fc.constant('station' as const), target: fc.constantFrom(...STATIONS) }),
    fc.record({ level: fc.constant('chargePoint' as const), target: fc.constantFrom(...CHARGE_POINTS) }),
  )
  .chain((scope) =>
    fc.record({
      groupId: fc.constant('g'),
      permission: fc.constantFrom('charge-points:read' as const, 'events:read' as const),
      level: fc.constant(scope.level),
      target: fc.constant(scope.target),
    }),
  );

describe('transaction history (site/transaction-history.ts)', () => {
  it("an application's reach in SQL selects exactly the transactions reaches() admits, for any grants and locations", () => {
    const db = openDatabase(tempDirForTest('history'));
    fc.assert(
      fc.property(fc.array(location, { maxLength: 30 }), fc.array(grant, { maxLength: 5 }), (locations, grants) => {
        const rows = db.transaction(() => {
          db.exec('DELETE FROM transactions');
          return locations.map((at) => ({ id: insertTransaction(db, at, '2026-11-01T08:00:00.000Z'), ...at }));
        })();
        const admitted = rows.filter((row) => reaches(grants, 'charge-points:read', 'acme', row)).map((row) => row.id);
        const scope = reachScope(grants, 'charge-points:read', 'acme');
        const selected = transactionHistory(db, { ...(scope !== 'everything' && { within: scope }), limit: 1000 }).map(
          (t) => t.id,
        );
        expect(selected).toEqual(admitted);
      }),
      { numRuns: 300 },
    );
    db.close();
  });

  it('with no `to`, a transaction of any year of four digits is listed, 9999 too', () => {
    const db = openDatabase(tempDirForTest('history'));
    const at = { siteId: 's1', stationId: 'ST1', chargePointId: 'CP1' };
    const ids = ['0000-01-01T00:00:00.000Z', '2026-11-01T08:00:00.000Z', '9999-12-31T23:59:59.999Z'].map((startedAt) =>
      insertTransaction(db, at, startedAt),
    );
    expect(transactionHistory(db, { limit: 10 }).map((t) => t.id)).toEqual(ids);
    expect(transactionHistory(db, { from: new Date('2026-11-01T08:00:00.000Z'), limit: 10 }).map((t) => t.id)).toEqual(
      ids.slice(1),
    );
    expect(transactionHistory(db, { to: new Date('9999-12-31T23:59:59.999Z'), limit: 10 }).map((t) => t.id)).toEqual(
      ids.slice(0, 2),
    );
    db.close();
  });
});
