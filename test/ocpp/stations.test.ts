import { describe, expect, it, onTestFinished } from 'vitest';
import { withContext } from '../../src/cli/context.js';
import { cliFailure } from '../../src/cli/failure.js';
import { Site } from '../../src/site/index.js';
import { runCli, runCliJson } from '../support/cli.js';
import { eventually, PROCESS_TEST_TIMEOUT_MS, siteWith, daemonForTest } from '../support/daemon.js';
import { tempSite } from '../support/temp-site.js';

/** What a `station` command does, in-process: the CLI's context (config, database) and its Site. */
function withSite<T>(configPath: string, fn: (site: Site) => T): Promise<T> {
  return withContext({ config: configPath }, (ctx) => fn(new Site({ db: ctx.db, config: () => ctx.config })));
}

function closed(station: {
  rpc: { once(event: 'close', listener: (e: { code: number; reason: string }) => void): unknown };
}): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => station.rpc.once('close', resolve));
}

describe('station pair', () => {
  it(
    'accepts only ids the OCPP listener admits: anything else is exit 2 and changes nothing',
    async () => {
      const temp = tempSite();
      onTestFinished(() => temp.cleanup());
      const message = 'is not a station id the OCPP listener admits: 1-48 letters, digits or . _ : -';
      // One real CLI run per answer (refused: exit 2 and one line on stderr even for an id with a newline; admitted:
      // exit 0); the other bad ids through the path the CLI takes, which decides the answer.
      const refused = await runCli(['station', 'pair', 'CP\n001', '--site', 's1', '--config', temp.configPath]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(message);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      for (const bad of ['CP 001', '\u001b[31mRED', 'X'.repeat(49), '', 'CP/001']) {
        const failure = await withSite(temp.configPath, (site) => site.stations.pair(bad, 's1')).then(
          () => undefined,
          cliFailure,
        );
        expect({ bad, exitCode: failure?.exitCode }).toEqual({ bad, exitCode: 2 });
        expect(failure?.message).toContain(message);
        // The CLI prints `chargegate: <message>`: one line.
        expect(failure?.message).not.toContain('\n');
      }
      const listed = await withSite(temp.configPath, (site) => site.stations.list({ includeRemoved: false }));
      expect(listed.map((s) => s.id)).toEqual(['CP001']);
      expect(
        (await runCli(['station', 'pair', 'CP-0042.a:b_c', '--site', 's1', '--config', temp.configPath])).code,
      ).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('station pair without --site', () => {
  it(
    "takes the site that lists the station, else the config's only site; with several sites it asks (exit 2)",
    async () => {
      const one = tempSite();
      onTestFinished(() => one.cleanup());
      expect(await runCliJson(['station', 'pair', 'CP-NEW', '--config', one.configPath])).toMatchObject({
        code: 0,
        data: { stationId: 'CP-NEW', siteId: 's1' },
      });

      const two = tempSite({
        sites: [
          { id: 's1', stations: [] },
          { id: 's2', stations: [{ id: 'CP201' }] },
        ],
      });
      onTestFinished(() => two.cleanup());
      expect(await runCliJson(['station', 'pair', 'CP201', '--config', two.configPath])).toMatchObject({
        code: 0,
        data: { stationId: 'CP201', siteId: 's2' },
      });
      const asked = await runCli(['station', 'pair', 'CP-NEW', '--config', two.configPath]);
      expect(asked.code).toBe(2);
      expect(asked.stderr.trim()).toBe('chargegate: --site is needed: the config has 2 sites (s1, s2)');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});

describe('station admission, pairing and connections', () => {
  it(
    'answers an unknown station Pending, records it, refuses its other calls with SecurityError, and admits it once paired',
    async () => {
      const t = await daemonForTest({
        ...siteWith(),
        ocpp: { host: '127.0.0.1', port: 0, securityProfile: 0, changePollMs: 100 },
      });
      const stranger = await t.connect('CP-NEW');
      expect(await stranger.boot({ chargePointVendor: 'Acme', chargePointModel: 'X1' })).toMatchObject({
        status: 'Pending',
        interval: 300,
      });
      await expect(stranger.authorize('TAG')).rejects.toMatchObject({ rpcErrorCode: 'SecurityError' });
      await expect(stranger.statusNotification({ connectorId: 1, status: 'Available' })).rejects.toMatchObject({
        rpcErrorCode: 'SecurityError',
      });
      expect(t.events()).toEqual([]);
      expect(
        t.logs.some(
          (l) =>
            l.stationId === 'CP-NEW' &&
            l.msg === 'call from a station that is not accepted; refused with SecurityError',
        ),
      ).toBe(true);

      const pending = await runCliJson<{
        stations: Array<{ id: string; state: string; online: boolean; bootInfo: object }>;
      }>(['station', 'list', '--pending', '--config', t.temp.configPath]);
      expect(pending.code).toBe(0);
      expect(pending.data.stations).toEqual([
        expect.objectContaining({
          id: 'CP-NEW',
          state: 'pending',
          online: true,
          bootInfo: expect.objectContaining({ chargePointVendor: 'Acme' }),
        }),
      ]);

      // Pairing from the CLI: the daemon notices, closes the pending connection; the station reconnects and is
      // Accepted.
      const wasClosed = closed(stranger);
      const paired = await runCliJson<{ password: string }>([
        'station',
        'pair',
        'CP-NEW',
        '--site',
        's1',
        '--config',
        t.temp.configPath,
      ]);
      expect(paired.code).toBe(0);
      expect(paired.data.password).toMatch(/^[A-Za-z0-9_-]{20,}$/);
      expect((await wasClosed).code).toBe(1008);
      const again = await t.connect('CP-NEW');
      expect(await again.boot()).toMatchObject({ status: 'Accepted' });
      await again.statusNotification({ connectorId: 1, status: 'Available' });
      expect(t.events('ChargePointStatus')[0]?.payload).toEqual({
        stationId: 'CP-NEW',
        chargePointId: 'CP-NEW',
        connectorId: 1,
        status: 'Available',
        errorCode: 'NoError',
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it('accepts unknown stations when acceptUnknownStations is set', async () => {
    const t = await daemonForTest({
      ...siteWith(),
      ocpp: { host: '127.0.0.1', port: 0, securityProfile: 0, acceptUnknownStations: true },
    });
    const station = await t.connect('CP-ANY');
    expect(await station.boot()).toMatchObject({ status: 'Accepted' });
    expect(await station.authorize('NOPE')).toEqual({ status: 'Invalid' });
  });

  it(
    'blocking a station closes its socket and Rejects its next BootNotification',
    async () => {
      const t = await daemonForTest({
        ...siteWith(),
        ocpp: { host: '127.0.0.1', port: 0, securityProfile: 0, changePollMs: 100 },
      });
      const station = await t.connect();
      await station.boot();
      const wasClosed = closed(station);
      const blocked = await runCliJson(['station', 'block', 'CP001', '--config', t.temp.configPath]);
      expect(blocked).toMatchObject({ code: 0, data: { stationId: 'CP001', state: 'blocked' } });
      // Not found is exit 1, as for every command.
      expect(await runCliJson(['station', 'block', 'CP-NOBODY', '--config', t.temp.configPath])).toMatchObject({
        code: 1,
        data: { error: 'no station "CP-NOBODY" in the config or the database' },
      });
      await wasClosed;
      const back = await t.connect();
      expect(await back.boot()).toMatchObject({ status: 'Rejected' });
      await expect(back.heartbeat()).rejects.toMatchObject({ rpcErrorCode: 'SecurityError' });

      // A removed station leaves the lists (station list, the status page); --all still shows it.
      expect((await runCliJson(['station', 'remove', 'CP001', '--config', t.temp.configPath])).code).toBe(0);
      // `station list` filters in-process as here; --all goes through the CLI.
      const listed = await withSite(t.temp.configPath, (site) => site.stations.list({ includeRemoved: false }));
      expect(listed.map((s) => s.id)).not.toContain('CP001');
      const all = await runCliJson<{ stations: Array<{ id: string; state: string }> }>([
        'station',
        'list',
        '--all',
        '--config',
        t.temp.configPath,
      ]);
      expect(all.data.stations).toContainEqual(expect.objectContaining({ id: 'CP001', state: 'removed' }));
      const status = (await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/status.json`)).json()) as {
        stations: Array<{ id: string }>;
      };
      expect(status.stations.map((s) => s.id)).not.toContain('CP001');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it('a second connection with the same identity replaces the first; the station stays online until the current one closes', async () => {
    const t = await daemonForTest(siteWith());
    const first = await t.connect();
    await first.boot();
    const firstClosed = closed(first);
    const second = await t.connect();
    expect(await firstClosed).toMatchObject({ code: 1000, reason: 'replaced by a new connection' });
    expect(await second.heartbeat()).toHaveProperty('currentTime');
    const online = () =>
      (t.db.prepare('SELECT online FROM stations WHERE id = ?').get('CP001') as { online: number }).online;
    expect(online()).toBe(1);
    await second.close();
    await eventually(() => online() === 0, 5000, 'offline after the last connection closed');
    expect(t.logged('station disconnected').length).toBe(2);
    expect(t.logged('station connected').every((l) => l.stationId === 'CP001' && l.siteId === 's1')).toBe(true);
  });
});

/** Contract section 7: identities made up by whoever reaches the port cannot grow the stations table. */
describe('pending stations', () => {
  it('are kept up to ocpp.maxPendingStations, the least recently seen dropped first, and for 7 days; configured stations are not counted', async () => {
    const t = await daemonForTest({
      ...siteWith(),
      ocpp: { host: '127.0.0.1', port: 0, securityProfile: 0, maxPendingStations: 3 },
    });
    t.db
      .prepare("INSERT INTO stations (id, state, first_seen, last_seen) VALUES ('OLD-1', 'pending', ?, ?)")
      .run('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z');
    const configured = await t.connect('CP001');
    await configured.boot();
    for (const id of ['U-1', 'U-2', 'U-3', 'U-4', 'U-5']) {
      const stranger = await t.connect(id);
      expect(await stranger.boot()).toMatchObject({ status: 'Pending' });
    }
    const pending = t.db
      .prepare("SELECT id FROM stations WHERE state = 'pending' AND id <> 'CP001' ORDER BY id")
      .pluck()
      .all();
    expect(pending).toEqual(['U-3', 'U-4', 'U-5']);
    expect(t.db.prepare("SELECT id FROM stations WHERE id = 'CP001'").pluck().get()).toBe('CP001');
  });
});
