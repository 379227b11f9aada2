import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Site } from '../../src/site/index.js';
import { TRANSACTION_COLUMNS, type Transaction } from '../../src/site/transactions.js';
import { GroupCommit } from '../../src/store/index.js';
import { siteFixture } from './site-fixture.js';

const CONNECTORS = [1, 2];
const TAGS = ['T1', 'T2', 'T3'];
const minute = fc.integer({ min: 0, max: 20 });

type Action =
  | { kind: 'start'; connectorId: number; tag: number; minute: number; meterStartWh: number }
  | { kind: 'repeatStart'; pick: number }
  | { kind: 'stop'; pick: number; byOther: boolean }
  | { kind: 'signedReading'; connectorId: number }
  | { kind: 'startUndone'; connectorId: number; tag: number; minute: number }
  | { kind: 'groupFails'; connectorId: number; tag: number; minute: number; stopPick: number }
  | { kind: 'commit' }
  | { kind: 'restart' };

const startFields = { connectorId: fc.constantFrom(...CONNECTORS), tag: fc.nat(TAGS.length - 1), minute };
const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('start' as const),
      ...startFields,
      meterStartWh: fc.constantFrom(0, 100),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('repeatStart' as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('stop' as const), pick: fc.nat(), byOther: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('signedReading' as const), connectorId: fc.constantFrom(...CONNECTORS) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('startUndone' as const), ...startFields }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('groupFails' as const), ...startFields, stopPick: fc.nat() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('commit' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const) }) },
);

/** A signed End reading, carried by the StopTransaction event (webhookDelivery.signedMeterValues: beginEnd). */
const END_READING = {
  context: 'Transaction.End',
  timestamp: new Date(Date.UTC(2026, 10, 29, 8, 25)),
  signedMeterData: 'OCMF|{}|{}',
  signingMethod: null,
  encodingMethod: null,
  publicKey: null,
};

const at = (minutes: number) => new Date(Date.UTC(2026, 10, 29, 8, minutes));

describe('the open transactions kept in memory (site/open-transactions.ts)', () => {
  const t = siteFixture();

  it('answer as the database does after any starts, repeats, stops, undone writes, failed commits and restarts; a stop carries every signed reading of its transaction', async () => {
    // A deferred foreign key is checked at COMMIT: a row breaking it makes the whole group's commit fail, for real.
    t.db.exec(
      'CREATE TABLE parents (id INTEGER PRIMARY KEY); CREATE TABLE children (parent_id INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)',
    );
    const row = (sql: string) =>
      t.db.prepare<unknown[], Transaction>(`SELECT ${TRANSACTION_COLUMNS} FROM transactions ${sql}`);
    const database = {
      open: () => row('WHERE stopped_at IS NULL ORDER BY id').all(),
      openOn: (connectorId: number) =>
        row('WHERE station_id = ? AND connector_id = ? AND stopped_at IS NULL ORDER BY id DESC LIMIT 1').get(
          'CP001',
          connectorId,
        ),
      openOfTag: (tag: string) => row('WHERE id_tag = ? AND stopped_at IS NULL ORDER BY id').all(tag),
      byId: (id: number) => row('WHERE id = ?').get(id),
      answeredStart: (connectorId: number, tag: string, meterStartWh: number, startedAt: Date) =>
        row(
          'WHERE station_id = ? AND connector_id = ? AND started_at = ? AND id_tag = ? AND meter_start_wh = ? ORDER BY id DESC LIMIT 1',
        ).get('CP001', connectorId, startedAt.toISOString(), tag, meterStartWh),
    };

    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 40 }), async (actions) => {
        t.db.exec(
          'DELETE FROM signed_readings; DELETE FROM transactions; DELETE FROM children; DELETE FROM deliveries; DELETE FROM events',
        );
        let group = new GroupCommit(t.db);
        let site: Site = t.rebuild({ writer: group });
        const starts: Array<{ connectorId: number; tag: string; meterStartWh: number; startedAt: Date }> = [];
        const ids = () =>
          row('ORDER BY id')
            .all()
            .map((r) => r.id);
        const start = (connectorId: number, tag: string, meterStartWh: number, startedAt: Date) => {
          starts.push({ connectorId, tag, meterStartWh, startedAt });
          return site.transactions.start({
            at: site.connectors.locate('CP001', connectorId),
            idTag: tag,
            meterStartWh,
            startedAt,
            source: 'ocpp',
          });
        };
        const stop = (pick: number, stationId = 'CP001') => {
          const known = ids();
          if (known.length === 0) return;
          site.transactions.stop({
            stationId,
            transactionId: known[pick % known.length]!,
            meterStopWh: 500,
            stoppedAt: at(30),
          });
        };

        try {
          for (const a of actions) {
            switch (a.kind) {
              case 'start':
                start(a.connectorId, TAGS[a.tag]!, a.meterStartWh, at(a.minute));
                break;
              case 'repeatStart': {
                const earlier = starts[a.pick % Math.max(1, starts.length)];
                // A repeat is answered with its transaction and opens none (the handler's rule, asked of the index).
                if (earlier) {
                  const { connectorId, tag, meterStartWh, startedAt } = earlier;
                  const answered = site.transactions.answeredStart('CP001', connectorId, tag, meterStartWh, startedAt);
                  expect(answered).toEqual(database.answeredStart(connectorId, tag, meterStartWh, startedAt));
                  if (!answered) start(connectorId, tag, meterStartWh, startedAt);
                }
                break;
              }
              case 'stop':
                stop(a.pick, a.byOther ? 'CP009' : 'CP001');
                break;
              case 'signedReading':
                site.transactions.keepReadings(
                  { stationId: 'CP001', connectorId: a.connectorId },
                  { signed: [{ ...END_READING, connectorId: a.connectorId }] },
                );
                break;
              case 'startUndone':
                expect(() =>
                  site.together(() => {
                    start(a.connectorId, TAGS[a.tag]!, 0, at(a.minute));
                    throw new Error('undone');
                  }),
                ).toThrow('undone');
                break;
              case 'groupFails': {
                await group.committed();
                start(a.connectorId, TAGS[a.tag]!, 0, at(a.minute));
                stop(a.stopPick);
                group.write(() => t.db.prepare('INSERT INTO children (parent_id) VALUES (42)').run());
                await expect(group.committed()).rejects.toThrow(/FOREIGN KEY/);
                break;
              }
              case 'commit':
                await group.committed();
                break;
              case 'restart':
                await group.committed();
                group = new GroupCommit(t.db);
                site = t.rebuild({ writer: group });
                break;
            }
            const { transactions } = site;
            expect(transactions.open()).toEqual(database.open());
            for (const connectorId of CONNECTORS)
              expect(transactions.openOn('CP001', connectorId)).toEqual(database.openOn(connectorId));
            for (const tag of TAGS) expect(transactions.openOfTag(tag)).toEqual(database.openOfTag(tag));
            for (const id of ids()) {
              expect(transactions.byId(id)).toEqual(database.byId(id));
              expect(transactions.ofStation('CP001', id)).toEqual(database.byId(id));
              expect(transactions.ofStation('CP009', id)).toBeUndefined();
            }
            for (const stopped of t.events('StopTransaction'))
              expect((stopped.signedMeterValues as unknown[] | undefined)?.length ?? 0).toBe(
                t.db
                  .prepare('SELECT COUNT(*) FROM signed_readings WHERE transaction_id = ?')
                  .pluck()
                  .get(stopped.transactionId),
              );
            for (const { connectorId, tag, meterStartWh, startedAt } of starts)
              expect(transactions.answeredStart('CP001', connectorId, tag, meterStartWh, startedAt)).toEqual(
                database.answeredStart(connectorId, tag, meterStartWh, startedAt),
              );
          }
        } finally {
          // A failed step leaves its group to commit before the next run (or a shrunk one) starts afresh.
          await group.committed().catch(() => undefined);
        }
      }),
      { numRuns: 100 },
    );
  });
});
