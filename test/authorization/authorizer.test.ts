import { utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { createAuthorizer, PluginLoadError, putIdTag, type Authorizer } from '../../src/authorization/index.js';
import { parseConfig, type Config } from '../../src/config/index.js';
import { connectUpstreamAsStation } from '../../src/ocpp/index.js';
import { Site } from '../../src/site/index.js';
import { DirectWriter, openDatabase, type Database } from '../../src/store/index.js';
import { tempSiteForTest } from '../support/for-test.js';
import { baseConfig, type TempSite } from '../support/temp-site.js';
import { FakeCpo } from './fake-cpo.js';
import { capturedLogger } from '../support/captured-log.js';

describe('the Authorize decision chain', () => {
  let temp: TempSite;
  let db: Database;
  let site: Site;
  let config: Config;
  const { logger, lines: logs } = capturedLogger();

  const configure = (overrides: Record<string, unknown>): void => {
    config = parseConfig(
      JSON.stringify({
        ...baseConfig(temp.dataDir),
        sites: [
          { id: 's1', stations: [{ id: 'CP001' }] },
          { id: 's2', stations: [{ id: 'CP201' }] },
        ],
        ...overrides,
      }),
    );
  };
  const start = async (overrides: Record<string, unknown> = {}): Promise<Authorizer> => {
    configure(overrides);
    const authorizer = await createAuthorizer({
      writer: new DirectWriter(db),
      config: () => config,
      site,
      logger,
      connectUpstream: connectUpstreamAsStation,
    });
    onTestFinished(() => authorizer.close());
    return authorizer;
  };
  const plugin = (body: string): string => {
    const file = path.join(temp.dir, `plugin-${logs.length}-${Math.random().toString(36).slice(2)}.mjs`);
    writeFileSync(file, body);
    return file;
  };

  beforeEach(() => {
    temp = tempSiteForTest();
    const opened = openDatabase(temp.dataDir);
    onTestFinished(() => void opened.close());
    db = opened;
    site = new Site({ db, config: () => config });
    logs.length = 0;
  });

  it('local list: status, expiry, site scope, case-insensitive match; default Invalid', async () => {
    const chain = await start();
    putIdTag(db, { idTag: 'ok-1', status: 'Accepted', expiresAt: null, siteId: null });
    putIdTag(db, { idTag: 'BLOCKED', status: 'Blocked', expiresAt: null, siteId: null });
    putIdTag(db, { idTag: 'OLD', status: 'Accepted', expiresAt: '2020-01-01T00:00:00.000Z', siteId: null });
    putIdTag(db, { idTag: 'LATER', status: 'Accepted', expiresAt: '2099-01-01T00:00:00.000Z', siteId: null });
    putIdTag(db, { idTag: 'S2-ONLY', status: 'Accepted', expiresAt: null, siteId: 's2' });

    const decide = async (idTag: string, stationId = 'CP001') => chain.authorize({ idTag, stationId });
    expect(await decide('OK-1')).toMatchObject({ status: 'Accepted', source: 'local', siteId: 's1' });
    expect(await decide('BLOCKED')).toMatchObject({ status: 'Blocked', source: 'local' });
    expect(await decide('OLD')).toMatchObject({ status: 'Expired', expiryDate: '2020-01-01T00:00:00.000Z' });
    expect(await decide('LATER')).toMatchObject({ status: 'Accepted', expiryDate: '2099-01-01T00:00:00.000Z' });
    expect(await decide('S2-ONLY')).toMatchObject({ status: 'Invalid', source: 'default' });
    expect(await decide('S2-ONLY', 'CP201')).toMatchObject({ status: 'Accepted', siteId: 's2' });
    expect(await decide('NOBODY')).toMatchObject({ status: 'Invalid', source: 'default' });
    expect(logs.filter((l) => l.msg === 'authorization decided').at(-1)).toMatchObject({
      stationId: 'CP001',
      siteId: 's1',
      idTag: 'NOBODY',
      status: 'Invalid',
      source: 'default',
    });
  });

  it('ConcurrentTx when the tag already charges and allowConcurrentTx is false, with the connector of its transaction here', async () => {
    const chain = await start();
    putIdTag(db, { idTag: 'BUSY', status: 'Accepted', expiresAt: null, siteId: null });
    const tx = site.transactions.start({
      at: site.connectors.locate('CP001', 2),
      idTag: 'BUSY',
      meterStartWh: 0,
      startedAt: new Date(),
      source: 'ocpp',
    });
    expect(await chain.authorize({ idTag: 'BUSY', stationId: 'CP001' })).toMatchObject({
      status: 'ConcurrentTx',
      connectorId: 2,
    });
    expect(await chain.authorize({ idTag: 'BUSY', stationId: 'CP201' })).toEqual(
      expect.not.objectContaining({ connectorId: expect.anything() }),
    );
    expect(
      await chain.authorize({ idTag: 'BUSY', stationId: 'CP001', connectorId: 2, transactionId: tx.id }),
    ).toMatchObject({ status: 'Accepted' });

    configure({ authorization: { allowConcurrentTx: true } });
    expect(await chain.authorize({ idTag: 'BUSY', stationId: 'CP001' })).toMatchObject({ status: 'Accepted' });
  });

  it('two StartTransactions with one tag deciding at the same time: one starts Accepted, the other is ConcurrentTx', async () => {
    // Both answers resolve in one tick (as two upstream replies read from one socket would), before either commits.
    const file = plugin(
      `let answer; export function authorize() { return (answer ??= new Promise((resolve) => setTimeout(() => resolve('Accepted'), 50))); }`,
    );
    const chain = await start({ authorization: { plugin: file } });
    const startOn = (stationId: string) =>
      chain.authorizeStart({ idTag: 'TWICE', stationId, connectorId: 1 }, (decision) =>
        site.transactions.start({
          at: site.connectors.locate(stationId, 1),
          idTag: 'TWICE',
          meterStartWh: 0,
          startedAt: new Date(),
          source: 'ocpp',
          authorizationStatus: decision.status,
        }),
      );
    const results = await Promise.all([startOn('CP001'), startOn('CP201')]);
    expect(results.map((r) => r.decision.status).sort()).toEqual(['Accepted', 'ConcurrentTx']);
    expect(site.transactions.openOfTag('TWICE')).toHaveLength(2);
  });

  it('plugin first: it may answer or pass; a plugin that throws, returns nonsense or is too slow counts as passing and is logged', async () => {
    putIdTag(db, { idTag: 'LOCAL', status: 'Accepted', expiresAt: null, siteId: null });
    const file = plugin(`
      export async function authorize({ idTag, stationId, connectorId, siteId }) {
        if (idTag === 'VIP') return 'Accepted';
        if (idTag === 'LOCAL' && siteId === 's1' && stationId === 'CP001' && connectorId === 1) return 'Blocked';
        if (idTag === 'BOOM') throw new Error('database of the plugin is down');
        if (idTag === 'ODD') return 'Maybe';
        if (idTag === 'SLOW') return new Promise((resolve) => setTimeout(() => resolve('Accepted'), 1000));
        return undefined;
      }`);
    const chain = await start({ authorization: { plugin: file, pluginTimeoutMs: 150 } });
    expect(await chain.authorize({ idTag: 'VIP', stationId: 'CP001' })).toMatchObject({
      status: 'Accepted',
      source: 'plugin',
    });
    expect(await chain.authorize({ idTag: 'LOCAL', stationId: 'CP001', connectorId: 1 })).toMatchObject({
      status: 'Blocked',
      source: 'plugin',
    });
    expect(await chain.authorize({ idTag: 'LOCAL', stationId: 'CP001' })).toMatchObject({
      status: 'Accepted',
      source: 'local',
    });
    for (const idTag of ['BOOM', 'ODD', 'SLOW'])
      expect(await chain.authorize({ idTag, stationId: 'CP001' })).toMatchObject({
        status: 'Invalid',
        source: 'default',
      });
    const failures = logs
      .filter((l) => l.msg === 'authorization plugin failed; passing to the local list')
      .map((l) => l.reason);
    expect(failures).toEqual([
      'threw: database of the plugin is down',
      expect.stringContaining('returned "Maybe"'),
      'no answer within 150 ms',
    ]);

    // An edited plugin is imported again on reload (SIGHUP); one that no longer loads leaves the old one in place.
    writeFileSync(file, "export const authorize = () => 'Expired';");
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    await chain.reload(config);
    expect(await chain.authorize({ idTag: 'VIP', stationId: 'CP001' })).toMatchObject({
      status: 'Expired',
      source: 'plugin',
    });
    writeFileSync(file, 'export const nothing = 1;');
    utimesSync(file, new Date(), new Date(Date.now() + 10_000));
    await expect(chain.reload(config)).rejects.toThrow(/exports no authorize function/);
    expect(await chain.authorize({ idTag: 'VIP', stationId: 'CP001' })).toMatchObject({
      status: 'Expired',
      source: 'plugin',
    });

    await expect(start({ authorization: { plugin: path.join(temp.dir, 'missing.mjs') } })).rejects.toBeInstanceOf(
      PluginLoadError,
    );
    await expect(
      createAuthorizer({
        writer: new DirectWriter(db),
        config: () => config,
        site,
        logger,
        connectUpstream: connectUpstreamAsStation,
      }),
    ).rejects.toThrow(/^authorization\.plugin: cannot load/);
  });

  it('upstream CPO: forwards with the station identity, caches the answer, falls back to it on timeout or when the CPO is gone', async () => {
    const cpo = await FakeCpo.startForTest();
    cpo.answers.set('ROAMING', { status: 'Accepted', expiryDate: '2099-01-01T00:00:00.000Z' });
    putIdTag(db, { idTag: 'MINE', status: 'Blocked', expiresAt: null, siteId: null });
    // The first call also opens the connection to the CPO: 300 ms was too short for that on a loaded 2-core box
    // (a full run once fell back to the default answer).
    const chain = await start({ upstream: { url: cpo.url, timeoutMs: 1000 } });

    expect(await chain.authorize({ idTag: 'ROAMING', stationId: 'CP001' })).toMatchObject({
      status: 'Accepted',
      source: 'upstream',
      expiryDate: '2099-01-01T00:00:00.000Z',
    });
    expect(await chain.authorize({ idTag: 'STRANGER', stationId: 'CP201' })).toMatchObject({
      status: 'Invalid',
      source: 'upstream',
    });
    expect(await chain.authorize({ idTag: 'MINE', stationId: 'CP001' })).toMatchObject({
      status: 'Blocked',
      source: 'local',
    });
    expect(cpo.identities.sort()).toEqual(['CP001', 'CP201']);
    expect(db.prepare('SELECT id_tag, status, expires_at FROM upstream_decisions ORDER BY id_tag').all()).toEqual([
      { id_tag: 'ROAMING', status: 'Accepted', expires_at: '2099-01-01T00:00:00.000Z' },
      { id_tag: 'STRANGER', status: 'Invalid', expires_at: null },
    ]);

    cpo.silent = true;
    expect(await chain.authorize({ idTag: 'ROAMING', stationId: 'CP001' })).toMatchObject({
      status: 'Accepted',
      source: 'upstream-cache',
    });
    expect(logs.some((l) => l.msg === 'upstream CPO did not answer Authorize in time' && l.stationId === 'CP001')).toBe(
      true,
    );

    await cpo.stop();
    expect(await chain.authorize({ idTag: 'ROAMING', stationId: 'CP001' })).toMatchObject({
      status: 'Accepted',
      source: 'upstream-cache',
    });
    expect(await chain.authorize({ idTag: 'NEVER-SEEN', stationId: 'CP001' })).toMatchObject({
      status: 'Invalid',
      source: 'default',
    });
    expect(await chain.authorize({ idTag: 'ROAMING', stationId: 'CP201' })).toMatchObject({
      status: 'Accepted',
      source: 'upstream-cache',
    });
  });
});
