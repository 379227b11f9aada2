import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { listCsmsIdTags, putIdTag } from '../../src/authorization/index.js';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS, siteWith, type TestDaemon } from '../support/daemon.js';
import { ManualClock } from '../support/fake-link-client.js';
import { receiverForTest, stationV201ForTest } from '../support/for-test.js';
import { simulatedRecord } from '../support/ocmf.js';
import type { StationV201 } from '../support/station-v201.js';
import {
  EV201,
  session201,
  transactionEvents201,
  UPLINK_WAIT_MS,
  uplinkConfig,
  upstreamHealth,
  waitsBetweenTries,
} from '../support/uplink.js';

/** The upstream status of EV201 on GET /health. */
async function linkOf(t: TestDaemon): Promise<Record<string, unknown> | undefined> {
  const stations = (await upstreamHealth(t.daemon.httpPort)).stations as Array<Record<string, unknown>>;
  return stations.find((s) => s.stationId === 'EV201');
}

/** A 2.0.1 station connected and booted, its link accepted by the CSMS. */
async function bootedStation(t: TestDaemon): Promise<StationV201> {
  const station = await stationV201ForTest(t.url, 'EV201');
  await station.boot();
  await eventually(async () => (await linkOf(t))?.connected, UPLINK_WAIT_MS, 'the link accepted');
  return station;
}

describe('uplink of an OCPP 2.0.1 station (ocpp-rpc RPCServer, strict OCPP 2.0.1)', () => {
  it(
    'its own link in 2.0.1: its BootNotification first, Authorize over it, transaction events live; cut, they are queued with offline: true and replayed in order, then the statuses in 2.0.1 form; the rest only while up',
    async () => {
      const csms = await TestCsms.startForTest();
      csms.behaviour = (m) =>
        m.action === 'Authorize' && (m.params.idToken as { idToken: string }).idToken === 'TAG-LATE'
          ? { answer: { idTokenInfo: { status: 'NotAtThisTime' } } }
          : undefined;
      // The reconnects' back-off waits for the test to move it on.
      const clock = new ManualClock(Date.now());
      const t = await daemonForTest({ ...siteWith([], [EV201]), ...uplinkConfig(csms) }, { linkClock: clock });
      const station = await bootedStation(t);
      expect(csms.received[0]).toEqual({
        identity: 'EV201',
        protocol: 'ocpp2.0.1',
        action: 'BootNotification',
        params: {
          chargingStation: { vendorName: 'ACME', model: 'Wallbox 2.0.1', firmwareVersion: '2.1.0' },
          reason: 'PowerUp',
        },
        answer: expect.objectContaining({ status: 'Accepted' }),
        atMs: expect.any(Number),
      });

      // The decision chain asks the CSMS over the link, with the token's own type.
      expect(await station.call('Authorize', { idToken: { idToken: 'TAG-201', type: 'eMAID' } })).toEqual({
        idTokenInfo: { status: 'Accepted' },
      });
      // A 2.0.1 status 1.6 does not have is no Accepted.
      expect(await station.call('Authorize', { idToken: { idToken: 'TAG-LATE', type: 'ISO14443' } })).toEqual({
        idTokenInfo: { status: 'Invalid' },
      });
      expect(csms.of('Authorize', 'EV201')).toEqual([
        { idToken: { idToken: 'TAG-201', type: 'eMAID' } },
        { idToken: { idToken: 'TAG-LATE', type: 'ISO14443' } },
      ]);
      expect(t.logged('authorization decided').map((l) => [l.idTag, l.status, l.source])).toEqual([
        ['TAG-201', 'Accepted', 'upstream'],
        ['TAG-LATE', 'Invalid', 'upstream'],
      ]);

      await session201(station, 'T1', 1000);
      await eventually(() => transactionEvents201(csms, 'EV201').length === 3, UPLINK_WAIT_MS, 'the online events');
      await station.call('Heartbeat', {});
      await station.call('DataTransfer', { vendorId: 'acme', messageId: 'hello' });
      await station.call('FirmwareStatusNotification', { status: 'Installed' });
      await eventually(() => csms.of('FirmwareStatusNotification', 'EV201').length === 1, UPLINK_WAIT_MS);
      expect(csms.of('DataTransfer', 'EV201')).toEqual([{ vendorId: 'acme', messageId: 'hello' }]);
      expect(csms.of('Heartbeat', 'EV201')).toEqual([{}]);

      await csms.cutOff();
      await station.status(1, 'Occupied');
      await station.call('Heartbeat', {});
      station.meterWh = 3000;
      await station.transactionEvent('Started', 'T2', { evseId: 1, idToken: 'TAG-201', chargingState: 'Charging' });
      station.meterWh = 3500;
      await station.transactionEvent('Updated', 'T2', { triggerReason: 'MeterValuePeriodic' });
      await station.call('SecurityEventNotification', {
        type: 'SettingSystemTime',
        timestamp: new Date().toISOString(),
      });
      station.meterWh = 4000;
      await station.transactionEvent('Ended', 'T2', { stoppedReason: 'EVDisconnected' });
      await station.status(1, 'Available');
      await station.status(2, 'Unavailable');
      await eventually(async () => (await linkOf(t))?.queued === 4, UPLINK_WAIT_MS, 'the queue while cut');
      const beforeRestore = csms.received.length;

      csms.restore();
      await waitsBetweenTries(clock, 1);
      await eventually(() => csms.of('StatusNotification', 'EV201').length === 2, UPLINK_WAIT_MS, 'the statuses');
      const replay = csms.received.slice(beforeRestore);
      expect(replay.map((m) => m.action)).toEqual([
        'BootNotification',
        'TransactionEvent',
        'TransactionEvent',
        'SecurityEventNotification',
        'TransactionEvent',
        'StatusNotification',
        'StatusNotification',
      ]);
      expect(replay[0]!.params).toEqual(csms.received[0]!.params);
      const events = transactionEvents201(csms, 'EV201');
      expect(events.map((e) => [e.key, e.params.offline])).toEqual([
        ['Started T1 1000', undefined],
        ['Updated T1 1500', undefined],
        ['Ended T1 2000', undefined],
        ['Started T2 3000', true],
        ['Updated T2 3500', true],
        ['Ended T2 4000', true],
      ]);
      // Unchanged but for the flag: the station's own transaction id, seqNo, token, readings.
      expect(events[3]!.params).toMatchObject({
        seqNo: 3,
        transactionInfo: { transactionId: 'T2', chargingState: 'Charging' },
        idToken: { idToken: 'TAG-201', type: 'ISO14443' },
        evse: { id: 1, connectorId: 1 },
      });
      // The current status of each connector (not the history), in 2.0.1's words.
      expect(replay.slice(5).map((m) => m.params)).toEqual([
        { timestamp: expect.any(String), connectorStatus: 'Available', evseId: 1, connectorId: 1 },
        { timestamp: expect.any(String), connectorStatus: 'Unavailable', evseId: 2, connectorId: 1 },
      ]);
      expect(csms.of('Heartbeat', 'EV201')).toHaveLength(1);

      // Live again once the queue and the statuses went (the last status's answer may still be on its way: sent again).
      await eventually(
        async () => {
          await station.status(2, 'Available');
          return csms.of('StatusNotification', 'EV201').length > 2;
        },
        UPLINK_WAIT_MS,
        'a live status',
      );
      expect(csms.of('StatusNotification', 'EV201')[2]).toMatchObject({ evseId: 2, connectorStatus: 'Available' });

      // The status `upstream status` shows (uplink-cli.test.ts runs the command), from /health.
      expect((await upstreamHealth(t.daemon.httpPort)).stations).toEqual([
        expect.objectContaining({ stationId: 'EV201', connected: true, queued: 0, dropped: 0, level: 'ok' }),
      ]);
      const metrics = await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/metrics`)).text();
      expect(metrics).toContain('chargegate_upstream_connected{station="EV201"} 1');
      expect(metrics).toContain('chargegate_upstream_queued_messages{station="EV201"} 0');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'every notification a 2.0.1 station sends reaches the CSMS while the uplink is up (its round trips complete), a status of an EVSE the config lacks too; ISO 15118 certificate requests are answered Failed here',
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({ ...siteWith([], [EV201]), ...uplinkConfig(csms) });
      const station = await bootedStation(t);
      const now = new Date().toISOString();
      const schedule = {
        id: 1,
        chargingRateUnit: 'A',
        chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }],
      } as const;
      const notifications = [
        ['ReservationStatusUpdate', { reservationId: 5, reservationUpdateStatus: 'Expired' }],
        ['NotifyChargingLimit', { chargingLimit: { chargingLimitSource: 'EMS' } }],
        ['ClearedChargingLimit', { chargingLimitSource: 'EMS' }],
        [
          'ReportChargingProfiles',
          {
            requestId: 3,
            chargingLimitSource: 'CSO',
            evseId: 1,
            chargingProfile: [
              {
                id: 9,
                stackLevel: 0,
                chargingProfilePurpose: 'TxDefaultProfile',
                chargingProfileKind: 'Relative',
                chargingSchedule: [schedule],
              },
            ],
          },
        ],
        ['NotifyMonitoringReport', { requestId: 4, seqNo: 0, generatedAt: now }],
        ['NotifyCustomerInformation', { data: 'none kept', seqNo: 0, generatedAt: now, requestId: 5 }],
        ['NotifyDisplayMessages', { requestId: 6 }],
        ['PublishFirmwareStatusNotification', { status: 'Idle' }],
        ['NotifyEVChargingSchedule', { timeBase: now, chargingSchedule: schedule, evseId: 1 }],
        ['NotifyEVChargingNeeds', { chargingNeeds: { requestedEnergyTransfer: 'AC_three_phase' }, evseId: 1 }],
        ['StatusNotification', { timestamp: now, connectorStatus: 'Available', evseId: 7, connectorId: 1 }],
      ] as const;
      for (const [action, params] of notifications) {
        const answer = await station.call(action, params as never);
        expect(answer, action).toEqual(
          action === 'NotifyEVChargingSchedule'
            ? { status: 'Accepted' }
            : action === 'NotifyEVChargingNeeds'
              ? { status: 'Rejected', statusInfo: { reasonCode: 'NoSchedule', additionalInfo: expect.any(String) } }
              : {},
        );
        await eventually(
          () => csms.of(action, 'EV201').some((p) => isDeepStrictEqual(p, params)),
          UPLINK_WAIT_MS,
          action,
        );
      }

      const refused = {
        status: 'Failed',
        statusInfo: { reasonCode: 'NotSupported', additionalInfo: expect.any(String) },
      };
      const ocspRequestData = {
        hashAlgorithm: 'SHA256',
        issuerNameHash: 'a'.repeat(64),
        issuerKeyHash: 'b'.repeat(64),
        serialNumber: '01',
        responderURL: 'http://ocsp.example.com',
      } as const;
      expect(await station.call('GetCertificateStatus', { ocspRequestData })).toEqual(refused);
      expect(
        await station.call('Get15118EVCertificate', {
          iso15118SchemaVersion: 'urn:iso:15118:2:2013:MsgDef',
          action: 'Install',
          exiRequest: 'AAAA',
        }),
      ).toEqual({ ...refused, exiResponse: '' });
      expect(csms.of('GetCertificateStatus', 'EV201')).toEqual([]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "the CSMS's 2.0.1 calls reach the station and its answers come back; RequestStopTransaction names the station's own id",
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({ ...siteWith([], [EV201]), ...uplinkConfig(csms) });
      const station = await bootedStation(t);
      station.handle('Reset', ({ type }) => ({ status: type === 'OnIdle' ? 'Scheduled' : 'Rejected' }));
      station.handle('GetVariables', ({ getVariableData: [{ component, variable }] }) => ({
        getVariableResult: [{ attributeStatus: 'Accepted', component, variable, attributeValue: '300' }],
      }));
      expect(await csms.call('EV201', 'Reset', { type: 'OnIdle' })).toEqual({ status: 'Scheduled' });
      const heartbeat = { component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' } };
      expect(await csms.call('EV201', 'GetVariables', { getVariableData: [heartbeat] })).toEqual({
        getVariableResult: [{ attributeStatus: 'Accepted', ...heartbeat, attributeValue: '300' }],
      });
      // A call the station does not implement: its CALLERROR reaches the CSMS.
      await expect(csms.call('EV201', 'UnlockConnector', { evseId: 1, connectorId: 1 })).rejects.toMatchObject({
        rpcErrorCode: 'NotImplemented',
      });
      // TriggerMessage: the station's answer, then the MeterValues it sends (live, as it is up).
      expect(await csms.call('EV201', 'TriggerMessage', { requestedMessage: 'MeterValues', evse: { id: 1 } })).toEqual({
        status: 'Accepted',
      });
      await eventually(() => csms.of('MeterValues', 'EV201').length === 1, UPLINK_WAIT_MS, 'the triggered reading');

      station.meterWh = 100;
      await station.transactionEvent('Started', 'LOCAL-1', { evseId: 1, idToken: 'TAG-A', chargingState: 'Charging' });
      expect(
        await csms.call('EV201', 'RequestStartTransaction', {
          idToken: { idToken: 'TAG-B', type: 'Central' },
          evseId: 2,
          remoteStartId: 7,
        }),
      ).toEqual({ status: 'Accepted' });
      const [remote] = station.transactions;
      await eventually(
        () => transactionEvents201(csms, 'EV201').some((e) => e.key.startsWith(`Started ${remote}`)),
        UPLINK_WAIT_MS,
        'the remote start upstream',
      );
      expect(await csms.call('EV201', 'RequestStopTransaction', { transactionId: remote })).toEqual({
        status: 'Accepted',
      });
      await eventually(
        () => transactionEvents201(csms, 'EV201').some((e) => e.key.startsWith(`Ended ${remote}`)),
        UPLINK_WAIT_MS,
        'the remote stop upstream',
      );
      expect(transactionEvents201(csms, 'EV201').find((e) => e.key.startsWith('Ended'))!.params).toMatchObject({
        transactionInfo: { transactionId: remote, stoppedReason: 'Remote' },
      });
      // The other session runs on; an id the station does not have is its own Rejected.
      expect(transactionEvents201(csms, 'EV201').map((e) => e.key)).not.toContainEqual(
        expect.stringMatching(/^Ended LOCAL-1/),
      );
      expect(await csms.call('EV201', 'RequestStopTransaction', { transactionId: 'NOPE' })).toEqual({
        status: 'Rejected',
      });
      await eventually(() => t.events('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the stop event');
      expect(t.events('StartTransaction').map((e) => e.payload.idTag)).toEqual(['TAG-A', 'TAG-B']);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "the CSMS's RequestStart/StopTransaction are the API's remote start and stop: the same checks, log lines and webhooks; its remoteStartId, EVSE and token reach the station",
    async () => {
      const csms = await TestCsms.startForTest();
      const receiver = await receiverForTest();
      const t = await daemonForTest({
        ...siteWith(
          [{ id: 'partner', url: receiver.url('/events'), events: ['StartTransaction', 'StopTransaction'] }],
          [EV201],
        ),
        ...uplinkConfig(csms),
      });
      putIdTag(t.db, { idTag: 'TAG-REMOTE', status: 'Accepted', expiresAt: null, siteId: null });
      const station = await bootedStation(t);
      const command = (action: string, params: object) => csms.call('EV201', action, params);
      const idToken = {
        idToken: 'TAG-REMOTE',
        type: 'ISO14443',
        additionalInfo: [{ additionalIdToken: 'CONTRACT-7', type: 'ContractId' }],
      };
      // The driver's group, for the station to let another token of it stop the session.
      const groupIdToken = { idToken: 'FLEET-1', type: 'Central' };
      const request = { idToken, groupIdToken, evseId: 2, remoteStartId: 4711 };

      expect(await command('RequestStartTransaction', request)).toEqual({ status: 'Accepted' });
      expect(station.remoteRequests).toEqual([{ action: 'RequestStartTransaction', params: request }]);
      const [remote] = station.transactions;
      const eventOf = (eventType: string) =>
        transactionEvents201(csms, 'EV201').find((e) => e.key.startsWith(`${eventType} ${remote}`));
      await eventually(() => eventOf('Started'), UPLINK_WAIT_MS, 'the remote start upstream');
      // The CSMS matches the transaction with its request by its own remoteStartId.
      expect(eventOf('Started')!.params).toMatchObject({
        transactionInfo: { transactionId: remote, remoteStartId: 4711 },
        idToken: { idToken: 'TAG-REMOTE', type: 'ISO14443' },
        evse: { id: 2 },
      });
      expect(await command('RequestStopTransaction', { transactionId: remote })).toEqual({ status: 'Accepted' });
      await eventually(() => eventOf('Ended'), UPLINK_WAIT_MS, 'the remote stop upstream');
      await receiver.waitForCount(2, UPLINK_WAIT_MS);
      const [started] = t.events('StartTransaction');
      expect(started!.payload).toMatchObject({ stationId: 'EV201', connectorId: 2, idTag: 'TAG-REMOTE' });
      expect(t.logged('remote start')).toEqual([
        expect.objectContaining({ by: 'csms', stationId: 'EV201', connectorId: 2, status: 'Accepted' }),
      ]);
      expect(t.logged('remote stop')).toEqual([
        expect.objectContaining({ by: 'csms', stationId: 'EV201', transactionId: started!.payload.transactionId }),
      ]);

      // Refused before the station hears of them, as the API refuses them: a transaction that is over, an id the
      // station never reported, an EVSE the config does not give the station.
      await eventually(() => t.events('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the stop recorded');
      expect(await command('RequestStopTransaction', { transactionId: remote })).toEqual({ status: 'Rejected' });
      expect(await command('RequestStopTransaction', { transactionId: 'NOPE' })).toEqual({ status: 'Rejected' });
      expect(await command('RequestStartTransaction', { idToken, evseId: 7, remoteStartId: 4712 })).toEqual({
        status: 'Rejected',
      });
      expect(t.logged('CSMS command refused: answered Rejected').map((l) => l.action)).toEqual([
        'RequestStopTransaction',
        'RequestStartTransaction',
      ]);
      expect(station.remoteRequests.map((r) => r.action)).toEqual([
        'RequestStartTransaction',
        'RequestStopTransaction',
      ]);

      // Begun before any event named a driver: chargegate has no transaction to stop yet, but the station has one and
      // the CSMS heard of it.
      await station.transactionEvent('Started', 'PLUGGED-1', { evseId: 1, chargingState: 'EVConnected' });
      expect(await command('RequestStopTransaction', { transactionId: 'PLUGGED-1' })).toEqual({ status: 'Accepted' });
      expect(station.remoteRequests.at(-1)).toEqual({
        action: 'RequestStopTransaction',
        params: { transactionId: 'PLUGGED-1' },
      });

      // The station's answer is the CSMS's: a transaction it had already started (the cable plugged in first).
      station.handle('RequestStartTransaction', () => ({ status: 'Accepted', transactionId: 'PLUGGED-1' }));
      expect(await command('RequestStartTransaction', { idToken, evseId: 1, remoteStartId: 4713 })).toEqual({
        status: 'Accepted',
        transactionId: 'PLUGGED-1',
      });
      // Its refusal too, with its reason.
      const refusal = {
        status: 'Rejected' as const,
        statusInfo: { reasonCode: 'Unavailable', additionalInfo: 'out of order' },
      };
      station.handle('RequestStartTransaction', () => refusal);
      expect(await command('RequestStartTransaction', { idToken, evseId: 1, remoteStartId: 4714 })).toEqual(refusal);
      station.handle('RequestStopTransaction', () => refusal);
      await station.transactionEvent('Started', 'PLUGGED-2', {
        evseId: 2,
        idToken: 'TAG-REMOTE',
        chargingState: 'Charging',
      });
      expect(await command('RequestStopTransaction', { transactionId: 'PLUGGED-2' })).toEqual(refusal);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "a 2.0.1 SendLocalList feeds chargegate's own list: with the CSMS cut, the station's Authorize is decided from it; GetLocalListVersion agrees; an Authorize decided locally still reaches the CSMS",
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({ ...siteWith([], [EV201]), ...uplinkConfig(csms) });
      const station = await bootedStation(t);
      const version = () => csms.call('EV201', 'GetLocalListVersion', {});
      expect(await version()).toEqual({ versionNumber: 0 });

      const cacheExpiryDateTime = '2099-01-01T00:00:00.000Z';
      const token = (idToken: string) => ({ idToken, type: 'ISO14443' as const });
      const full = {
        versionNumber: 1,
        updateType: 'Full',
        localAuthorizationList: [
          {
            idToken: token('TAG-FLEET'),
            idTokenInfo: { status: 'Accepted', cacheExpiryDateTime, groupIdToken: token('FLEET') },
          },
          { idToken: token('TAG-GONE'), idTokenInfo: { status: 'Accepted' } },
          { idToken: token('TAG-BROKE'), idTokenInfo: { status: 'NoCredit' } },
        ],
      };
      expect(await csms.call('EV201', 'SendLocalList', full)).toEqual({ status: 'Accepted' });
      const differential = {
        versionNumber: 2,
        updateType: 'Differential',
        localAuthorizationList: [
          { idToken: token('TAG-GONE') },
          { idToken: { idToken: 'tag-new', type: 'eMAID' }, idTokenInfo: { status: 'Blocked' } },
        ],
      };
      expect(await csms.call('EV201', 'SendLocalList', differential)).toEqual({ status: 'Accepted' });
      // Relayed: the station holds the same list.
      expect([...station.localList.keys()]).toEqual(['TAG-FLEET', 'TAG-BROKE', 'tag-new']);
      expect(await version()).toEqual({ versionNumber: 2 });

      // A list the station does not take is not taken here either.
      station.handle('SendLocalList', () => ({ status: 'VersionMismatch' }));
      expect(await csms.call('EV201', 'SendLocalList', { versionNumber: 3, updateType: 'Full' })).toEqual({
        status: 'VersionMismatch',
      });
      expect(await version()).toEqual({ versionNumber: 2 });
      // A station whose list is not chargegate's copy: 0, so the CSMS sends a Full list both take.
      station.localListVersion = 9;
      expect(await version()).toEqual({ versionNumber: 0 });

      // In chargegate's list, in 1.6's words: a status 1.6 does not have is Invalid. (Read as `idtag list` reads it:
      // uplink.test.ts runs that command on the 1.6 station's list.)
      const csmsEntry = (idTag: string, status: string, more: object = {}) =>
        expect.objectContaining({ idTag, status, stationId: 'EV201', listVersion: 2, ...more });
      expect(listCsmsIdTags(t.db)).toEqual([
        csmsEntry('TAG-BROKE', 'Invalid'),
        csmsEntry('TAG-FLEET', 'Accepted', { expiresAt: cacheExpiryDateTime, parentIdTag: 'FLEET' }),
        csmsEntry('tag-new', 'Blocked'),
      ]);

      // Decided from the list before the CSMS is asked, then sent to it all the same.
      const authorize = (idToken: string) => station.call('Authorize', { idToken: token(idToken) });
      expect(await authorize('TAG-FLEET')).toEqual({ idTokenInfo: { status: 'Accepted', cacheExpiryDateTime } });
      await eventually(() => csms.of('Authorize', 'EV201').length === 1, UPLINK_WAIT_MS, 'the Authorize forwarded');
      expect(csms.of('Authorize', 'EV201')).toEqual([{ idToken: token('TAG-FLEET') }]);

      await csms.cutOff();
      expect(await authorize('TAG-FLEET')).toEqual({ idTokenInfo: { status: 'Accepted', cacheExpiryDateTime } });
      expect(await authorize('TAG-NEW')).toEqual({ idTokenInfo: { status: 'Blocked' } });
      expect(await authorize('TAG-BROKE')).toEqual({ idTokenInfo: { status: 'Invalid' } });
      expect(await authorize('TAG-GONE')).toEqual({ idTokenInfo: { status: 'Invalid' } });
      expect(t.logged('authorization decided').map((l) => [l.idTag, l.status, l.source])).toEqual([
        ['TAG-FLEET', 'Accepted', 'local'],
        ['TAG-FLEET', 'Accepted', 'local'],
        ['TAG-NEW', 'Blocked', 'local'],
        ['TAG-BROKE', 'Invalid', 'local'],
        ['TAG-GONE', 'Invalid', 'default'],
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "a Started the CSMS refuses every time is dropped with its transaction's events, counted; one answered with a token not Accepted is logged and the session goes on",
    async () => {
      const csms = await TestCsms.startForTest();
      csms.behaviour = (m) => {
        if (m.action !== 'TransactionEvent' || m.params.eventType !== 'Started') return undefined;
        const id = (m.params.transactionInfo as { transactionId: string }).transactionId;
        if (id === 'REFUSED') return 'callerror';
        return id === 'BLOCKED' ? { answer: { idTokenInfo: { status: 'Blocked' } } } : undefined;
      };
      const t = await daemonForTest({
        ...siteWith([], [EV201]),
        ...uplinkConfig(csms, { transactionMessageAttempts: 3 }),
      });
      const station = await bootedStation(t);
      await session201(station, 'REFUSED', 0);
      await session201(station, 'BLOCKED', 5000);
      await eventually(
        () => transactionEvents201(csms, 'EV201').some((e) => e.key.startsWith('Ended BLOCKED')),
        UPLINK_WAIT_MS,
        'the next transaction upstream',
      );
      expect(transactionEvents201(csms, 'EV201').map((e) => e.key)).toEqual([
        'Started REFUSED 0',
        'Started REFUSED 0',
        'Started REFUSED 0',
        'Started BLOCKED 5000',
        'Updated BLOCKED 5500',
        'Ended BLOCKED 6000',
      ]);
      await eventually(async () => (await linkOf(t))?.dropped === 3, UPLINK_WAIT_MS, 'the drops counted');
      expect(t.logged('CSMS did not accept the token of a transaction; the local decision stands')).toEqual([
        expect.objectContaining({ stationId: 'EV201', stationTransactionId: 'BLOCKED', status: 'Blocked' }),
      ]);
      // Both sessions are chargegate's as the station reported them.
      expect(t.events('StopTransaction')).toHaveLength(2);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a CSMS answering Pending holds the queue and is asked again at its interval; Accepted, the queue goes',
    async () => {
      const csms = await TestCsms.startForTest();
      csms.bootStatus = 'Pending';
      const clock = new ManualClock(Date.now());
      const t = await daemonForTest({ ...siteWith([], [EV201]), ...uplinkConfig(csms) }, { linkClock: clock });
      const station = await stationV201ForTest(t.url, 'EV201');
      await station.boot();
      await session201(station, 'HELD', 0);
      // Asked again and again at the CSMS's interval (1 s), the queue held.
      expect(await waitsBetweenTries(clock, 2)).toEqual([1000, 1000]);
      await eventually(() => csms.of('BootNotification', 'EV201').length === 3, UPLINK_WAIT_MS, 'the boot asked again');
      expect(csms.of('TransactionEvent', 'EV201')).toEqual([]);
      // Between two asks (during one the link is `booting`).
      await eventually(
        async () => {
          const link = await linkOf(t);
          return link?.state === 'pending' && link.queued === 3 && link.level === 'warning';
        },
        UPLINK_WAIT_MS,
        'the link pending, its queue held',
      );
      csms.bootStatus = 'Accepted';
      await waitsBetweenTries(clock, 1);
      await eventually(() => transactionEvents201(csms, 'EV201').length === 3, UPLINK_WAIT_MS, 'the queue sent');
      expect(transactionEvents201(csms, 'EV201').map((e) => e.params.offline)).toEqual([true, true, true]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'past queueLimit the oldest periodic Updated events go; Started, Ended, a chargingState change and a signed reading stay',
    async () => {
      const csms = await TestCsms.startForTest();
      const clock = new ManualClock(Date.now());
      const t = await daemonForTest(
        { ...siteWith([], [EV201]), ...uplinkConfig(csms, { queueLimit: 4 }) },
        { linkClock: clock },
      );
      const station = await bootedStation(t);
      await csms.cutOff();
      const periodic = async (wh: number, options: Parameters<StationV201['transactionEvent']>[2] = {}) => {
        station.meterWh = wh;
        await station.transactionEvent('Updated', 'LIMIT', { triggerReason: 'MeterValuePeriodic', ...options });
      };
      station.meterWh = 0;
      await station.transactionEvent('Started', 'LIMIT', { evseId: 1, idToken: 'TAG-201', chargingState: 'Charging' });
      await periodic(1);
      await periodic(2);
      await periodic(3, { chargingState: 'SuspendedEV', triggerReason: 'ChargingStateChanged' });
      await periodic(4, {
        signedMeterValue: {
          signedMeterData: simulatedRecord(0.004, 'B'),
          signingMethod: '',
          encodingMethod: 'OCMF',
          publicKey: '',
        },
      });
      await periodic(5);
      station.meterWh = 6;
      await station.transactionEvent('Ended', 'LIMIT', { stoppedReason: 'EVDisconnected' });
      csms.restore();
      await waitsBetweenTries(clock, 1);
      await eventually(
        () => transactionEvents201(csms, 'EV201').some((e) => e.key.startsWith('Ended')),
        UPLINK_WAIT_MS,
        'the replay',
      );
      expect(transactionEvents201(csms, 'EV201').map((e) => e.key)).toEqual([
        'Started LIMIT 0',
        'Updated LIMIT 3',
        'Updated LIMIT 4',
        'Ended LIMIT 6',
      ]);
      expect((await linkOf(t))?.dropped).toBe(3);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
