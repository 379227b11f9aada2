import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { limitAt, type LimitProfile } from '../../src/load/index.js';
import { Site } from '../../src/site/index.js';
import { GroupCommit } from '../../src/store/index.js';
import { CsmsProfiles } from '../../src/uplink/csms-profiles.js';
import { capturedLogger } from '../support/captured-log.js';
import { baseConfig } from '../support/temp-site.js';
import { databasePerTest } from '../support/temp-database.js';

/*
 * docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles: how chargegate keeps the CSMS's profiles, on a real database and the
 * site's own transactions. 2.0.1's rules where they differ from 1.6's: another id at a taken stack level is refused
 * while their validity overlaps, and a remote start's profile goes to the transaction the station names by the
 * remoteStartId.
 */

const T0 = Date.parse('2026-03-02T06:00:00.000Z');
const HOUR_MS = 3_600_000;

/** A profile of `limitA` amperes, valid in [from, to) when given. */
function profile(
  id: number,
  purpose: LimitProfile['purpose'],
  limitA: number,
  validity: { fromMs?: number; toMs?: number } = {},
): LimitProfile {
  return {
    id,
    stackLevel: 2,
    purpose,
    kind: 'relative',
    ...(validity.fromMs !== undefined && { validFromMs: validity.fromMs }),
    ...(validity.toMs !== undefined && { validToMs: validity.toMs }),
    schedule: { unit: 'A', periods: [{ startS: 0, limit: limitA }] },
  };
}

describe("the CSMS's charging profiles as chargegate keeps them", () => {
  const store = databasePerTest();
  const { logger } = capturedLogger();

  function parts(): { site: Site; writer: GroupCommit; profiles: () => CsmsProfiles } {
    const config = parseConfig(
      JSON.stringify({
        ...baseConfig(store.temp.dataDir),
        sites: [
          {
            id: 's1',
            stations: [{ id: 'EV201', chargePoints: [{ id: 'EV201-A', connectors: [1] }] }],
            meters: [],
            webhooks: [],
          },
        ],
      }),
    );
    const writer = new GroupCommit(store.db);
    const site = new Site({ db: store.db, writer, config: () => config });
    // A new CsmsProfiles is the one of a restarted daemon: it reads what the database kept.
    return { site, writer, profiles: () => new CsmsProfiles(writer, site.transactions, logger, () => new Date(T0)) };
  }

  /** A transaction the station began on EVSE 1 with its own id, at T0. */
  const startOnEvse1 = (site: Site, idTag: string, stationTransactionId: string) =>
    site.transactions.start({
      at: site.connectors.locate('EV201', 1),
      idTag,
      meterStartWh: 0,
      startedAt: new Date(T0),
      source: 'ocpp',
      stationTransactionId,
    });

  const limitOn = (profiles: CsmsProfiles, atMs: number, transaction?: { id: number; startedAtMs: number }) =>
    limitAt(
      profiles.scheduleOf(
        'EV201',
        { connectorId: 1, phases: 3, ...(transaction && { transaction }) },
        { fromMs: T0, toMs: T0 + 4 * HOUR_MS },
      ),
      atMs,
    );

  it('2.0.1 refuses another id at a taken stack level while their validity overlaps; 1.6 replaces it', async () => {
    const profiles = parts().profiles();
    const refused = { sameLevel: 'refused' } as const;
    expect(await profiles.set('EV201', 1, profile(1, 'transactionDefault', 16, { toMs: T0 + HOUR_MS }), refused)).toBe(
      undefined,
    );
    expect(await profiles.set('EV201', 1, profile(2, 'transactionDefault', 8), refused)).toEqual({
      reasonCode: 'DuplicateProfile',
      why: 'another profile holds its stack level and purpose there',
    });
    // After the first one's validity: both kept, each in its own time.
    expect(await profiles.set('EV201', 1, profile(2, 'transactionDefault', 8, { fromMs: T0 + HOUR_MS }), refused)).toBe(
      undefined,
    );
    // The same id replaces itself under either rule.
    expect(
      await profiles.set('EV201', 1, profile(2, 'transactionDefault', 10, { fromMs: T0 + HOUR_MS }), refused),
    ).toBe(undefined);
    expect([limitOn(profiles, T0), limitOn(profiles, T0 + 2 * HOUR_MS)]).toEqual([16, 10]);

    expect(await profiles.set('EV201', 1, profile(3, 'transactionDefault', 12), { sameLevel: 'replaces' })).toBe(
      undefined,
    );
    expect([limitOn(profiles, T0), limitOn(profiles, T0 + 2 * HOUR_MS)]).toEqual([12, 12]);
    expect(await profiles.set('EV201', 1, profile(4, 'stationMaximum', 20), refused)).toMatchObject({
      reasonCode: 'InvalidValue',
    });
    expect(await profiles.set('EV201', 1, profile(5, 'transaction', 20), refused)).toMatchObject({
      reasonCode: 'TxNotFound',
    });
  });

  it("a remote start's profile goes to the transaction the station names by its remoteStartId, before a later one of the same idTag; kept over a restart", async () => {
    const { site, writer, profiles: make } = parts();
    const profiles = make();
    await profiles.expectRemoteStart('EV201', { idTag: 'TAG-1', remoteStartId: 41 }, profile(41, 'transaction', 10));
    // A later remote start of the same idTag, which a station that did not name its start would get.
    await profiles.expectRemoteStart('EV201', { idTag: 'TAG-1', remoteStartId: 42 }, profile(42, 'transaction', 12));
    profiles.noteRemoteStarted('EV201', 'EV201-tx-1', 41);
    const t = startOnEvse1(site, 'TAG-1', 'EV201-tx-1');
    await writer.committed();
    const transaction = { id: t.id, startedAtMs: T0 };
    await expect.poll(() => limitOn(profiles, T0, transaction)).toBe(10);
    profiles.stop();

    const restarted = make();
    expect(limitOn(restarted, T0, transaction)).toBe(10);
    // The other one still waits for its start, limiting nothing meanwhile.
    expect(limitOn(restarted, T0)).toBeUndefined();
    expect(
      store.db
        .prepare('SELECT profile_id, remote_start_id, transaction_id FROM csms_charging_profiles ORDER BY profile_id')
        .all(),
    ).toEqual([
      { profile_id: 41, remote_start_id: null, transaction_id: t.id },
      { profile_id: 42, remote_start_id: 42, transaction_id: null },
    ]);
    restarted.stop();
  });

  it("a remote start's profile is not taken by the API's start of another token that has the same remoteStartId", async () => {
    const { site, writer, profiles: make } = parts();
    const profiles = make();
    await profiles.expectRemoteStart('EV201', { idTag: 'TAG-CSMS', remoteStartId: 7 }, profile(70, 'transaction', 10));
    // The API's start of another token, with the same number, begins first.
    profiles.noteRemoteStarted('EV201', 'EV201-tx-api', 7, 'TAG-API');
    // Told after the profiles are (listeners in order): they have seen it running.
    const told = new Promise<void>((resolve) => {
      const off = site.transactions.onOpenedOrClosed(() => (off(), resolve()));
    });
    const api = startOnEvse1(site, 'TAG-API', 'EV201-tx-api');
    await told;
    site.transactions.stop({ stationId: 'EV201', transactionId: api.id, meterStopWh: 0, stoppedAt: new Date(T0) });
    await writer.committed();

    profiles.noteRemoteStarted('EV201', 'EV201-tx-csms', 7, 'TAG-CSMS');
    const csms = startOnEvse1(site, 'TAG-CSMS', 'EV201-tx-csms');
    await writer.committed();
    await expect.poll(() => limitOn(profiles, T0, { id: csms.id, startedAtMs: T0 })).toBe(10);
    expect(limitOn(profiles, T0, { id: api.id, startedAtMs: T0 })).toBeUndefined();
    profiles.stop();
  });

  it("at start, deletes the profiles of transactions that ended while it was down, and remote starts' that waited too long", async () => {
    const { site, writer, profiles: make } = parts();
    const profiles = make();
    const t = startOnEvse1(site, 'TAG-1', 'EV201-tx-1');
    await writer.committed();
    expect(await profiles.set('EV201', 1, profile(1, 'transaction', 10), { sameLevel: 'replaces' })).toBe(undefined);
    await profiles.expectRemoteStart('EV201', { idTag: 'TAG-2', remoteStartId: 2 }, profile(2, 'transaction', 12));
    await profiles.set('EV201', 0, profile(3, 'transactionDefault', 16), { sameLevel: 'replaces' });
    profiles.stop();
    // Down: the transaction ends, and the remote start's wait runs out.
    site.transactions.stop({ stationId: 'EV201', transactionId: t.id, meterStopWh: 0, stoppedAt: new Date(T0) });
    await writer.committed();

    const later = new CsmsProfiles(writer, site.transactions, logger, () => new Date(T0 + 6 * 60_000));
    await writer.committed();
    const ids = store.db.prepare('SELECT profile_id FROM csms_charging_profiles ORDER BY profile_id').pluck().all();
    expect(ids).toEqual([3]);
    later.stop();
  });
});
