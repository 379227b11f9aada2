import { beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { createAuthorizer, putIdTag } from '../../src/authorization/index.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import {
  connectUpstreamAsStation,
  startCentralSystem,
  StationCallError,
  StationOfflineError,
  StationTimeoutError,
  type CentralSystem,
} from '../../src/ocpp/index.js';
import { Site } from '../../src/site/index.js';
import { DirectWriter, openDatabase, type Database } from '../../src/store/index.js';
import { stationForTest, tempSiteForTest } from '../support/for-test.js';
import type { SimulatedStation } from '../support/station.js';
import { eventually } from '../support/daemon.js';

/** The central system on its own (as the API part uses it through `centralSystem.commands`). */
describe('StationCommands', () => {
  let db: Database;
  let central: CentralSystem;
  let station: SimulatedStation;

  // Each part is let go when the test finishes, the last made first.
  beforeEach(async () => {
    const temp = tempSiteForTest({ ocpp: { host: '127.0.0.1', port: 0, securityProfile: 0, callTimeoutMs: 400 } });
    const config = loadConfig(temp.configPath);
    const opened = openDatabase(config.dataDir);
    onTestFinished(() => void opened.close());
    db = opened;
    const site = new Site({ db, config: () => config });
    const logger = createLogger('silent');
    const authorizer = await createAuthorizer({
      writer: new DirectWriter(db),
      config: () => config,
      site,
      logger,
      connectUpstream: connectUpstreamAsStation,
    });
    onTestFinished(() => authorizer.close());
    const started = await startCentralSystem({ config: () => config, db, site, authorizer, logger });
    onTestFinished(() => started.close());
    central = started;
    station = await stationForTest(`ws://127.0.0.1:${central.port}/ocpp`, 'CP001');
    await station.boot();
  });

  const events = (type: string) =>
    (
      db.prepare('SELECT payload FROM events WHERE event_type = ? ORDER BY seq').all(type) as Array<{ payload: string }>
    ).map((r) => JSON.parse(r.payload) as Record<string, unknown>);

  it('remote start makes the station really start a transaction; remote stop makes it stop with reason Remote', async () => {
    putIdTag(db, { idTag: 'APP-1', status: 'Accepted', expiresAt: null, siteId: null });
    expect(await central.commands.remoteStartTransaction('CP001', { connectorId: 2, idTag: 'APP-1' })).toEqual({
      status: 'Accepted',
    });
    const started = await station.nextRemoteStart();
    expect(started).toMatchObject({ connectorId: 2, idTag: 'APP-1' });
    expect(events('StartTransaction')).toEqual([
      expect.objectContaining({ connectorId: 2, idTag: 'APP-1', transactionId: started.transactionId }),
    ]);

    // Connector 2 is busy now: the station refuses a second start there.
    expect(await central.commands.remoteStartTransaction('CP001', { connectorId: 2, idTag: 'APP-1' })).toEqual({
      status: 'Rejected',
    });

    expect(await central.commands.remoteStopTransaction('CP001', { transactionId: started.transactionId })).toEqual({
      status: 'Accepted',
    });
    await station.nextRemoteStop();
    expect(events('StopTransaction')).toEqual([
      expect.objectContaining({ transactionId: started.transactionId, reason: 'Remote' }),
    ]);
    expect(await central.commands.remoteStopTransaction('CP001', { transactionId: started.transactionId })).toEqual({
      status: 'Rejected',
    });
  });

  it('sends every configuration and maintenance command with its typed answer', async () => {
    const { commands } = central;
    expect(await commands.changeConfiguration('CP001', { key: 'HeartbeatInterval', value: '120' })).toEqual({
      status: 'Accepted',
    });
    expect(await commands.getConfiguration('CP001', { key: ['HeartbeatInterval', 'Nope'] })).toEqual({
      configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '120' }],
      unknownKey: ['Nope'],
    });
    expect(await commands.reset('CP001', { type: 'Soft' })).toEqual({ status: 'Accepted' });
    expect(await commands.unlockConnector('CP001', { connectorId: 1 })).toEqual({ status: 'Unlocked' });
    expect(await commands.changeAvailability('CP001', { connectorId: 0, type: 'Inoperative' })).toEqual({
      status: 'Accepted',
    });
    expect(await commands.triggerMessage('CP001', { requestedMessage: 'StatusNotification', connectorId: 1 })).toEqual({
      status: 'Accepted',
    });
    await eventually(() => events('ChargePointStatus').length === 1, 5000, 'the triggered StatusNotification');
    expect(station.received.map((r) => r.action)).toEqual([
      'ChangeConfiguration',
      'GetConfiguration',
      'Reset',
      'UnlockConnector',
      'ChangeAvailability',
      'TriggerMessage',
    ]);
  });

  it('rejects with StationOfflineError, StationTimeoutError and StationCallError', async () => {
    expect(central.commands.isOnline('CP001')).toBe(true);
    expect(central.commands.isOnline('CP404')).toBe(false);
    await expect(central.commands.reset('CP404', { type: 'Hard' })).rejects.toBeInstanceOf(StationOfflineError);

    station.handle('Reset', (_params, signal) => new Promise((resolve) => signal.addEventListener('abort', resolve)));
    await expect(central.commands.reset('CP001', { type: 'Hard' })).rejects.toBeInstanceOf(StationTimeoutError);

    station.handle('UnlockConnector', () => {
      throw Object.assign(new Error('no such connector'), { rpcErrorCode: 'NotSupported' });
    });
    const refused = central.commands.unlockConnector('CP001', { connectorId: 9 });
    await expect(refused).rejects.toBeInstanceOf(StationCallError);
    await expect(refused).rejects.toMatchObject({ ocppErrorCode: 'NotSupported' });

    await station.close();
    await eventually(() => !central.commands.isOnline('CP001'), 5000, 'station offline');
    await expect(central.commands.remoteStartTransaction('CP001', { idTag: 'X' })).rejects.toBeInstanceOf(
      StationOfflineError,
    );
  });
});
