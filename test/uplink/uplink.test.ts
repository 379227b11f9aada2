import { describe, expect, it, vi } from 'vitest';
import { putIdTag } from '../../src/authorization/index.js';
import { runCli, runCliJson } from '../support/cli.js';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS, siteWith, type TestDaemon } from '../support/daemon.js';
import { ManualClock } from '../support/fake-link-client.js';
import { receiverForTest } from '../support/for-test.js';
import { simulatedRecord } from '../support/ocmf.js';
import {
  linkedSite,
  session,
  transactionMessages16 as transactionMessages,
  UPLINK_WAIT_MS,
  uplinkConfig,
  upstreamHealth,
  waitsBetweenTries,
} from '../support/uplink.js';

async function health(t: TestDaemon): Promise<Record<string, unknown>> {
  return upstreamHealth(t.daemon.httpPort);
}

describe('uplink to a CSMS (ocpp-rpc RPCServer, strict OCPP 1.6)', () => {
  it(
    'cut for three sessions: stations charge locally, webhooks arrive; restored, the CSMS gets every message in order with its own ids, and its RemoteStop stops the right session',
    async () => {
      const csms = await TestCsms.startForTest();
      const receiver = await receiverForTest();
      // The reconnects' back-off waits for the test to move it on (the link down more than 60 s is Date's, below).
      const clock = new ManualClock(Date.now());
      const t = await daemonForTest(
        {
          ...siteWith([
            { id: 'partner', url: receiver.url('/events'), events: ['StartTransaction', 'StopTransaction'] },
          ]),
          ...uplinkConfig(csms),
        },
        { linkClock: clock },
      );
      const station = await t.connect();
      await station.boot({ chargePointVendor: 'Acme', chargePointModel: 'Wallbox 7' });
      await eventually(() => csms.of('BootNotification').length > 0, UPLINK_WAIT_MS, 'the uplink boot');
      expect(csms.of('BootNotification')[0]).toMatchObject({
        chargePointVendor: 'Acme',
        chargePointModel: 'Wallbox 7',
      });

      const online = await session(station, 1);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the online session upstream');

      await csms.cutOff();
      await station.statusNotification({ connectorId: 1, status: 'Charging' });
      const offline = [await session(station, 2), await session(station, 3), await session(station, 4)];
      await station.statusNotification({ connectorId: 1, status: 'Finishing' });
      // The partner hears of every local session while the CSMS is away.
      await receiver.waitForCount(8, UPLINK_WAIT_MS);
      expect(csms.of('StopTransaction')).toHaveLength(1);
      const whileDown = await health(t);
      expect(whileDown.stations).toEqual([
        expect.objectContaining({ stationId: 'CP001', connected: false, queued: 9, level: 'ok' }),
      ]);
      // A minute on (the clock moved forward, as a skewed one would): down for more than 60 s with a queue warns.
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });
      try {
        expect(await health(t)).toMatchObject({
          status: 'warning',
          stations: [expect.objectContaining({ level: 'warning' })],
        });
        const waiting = await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/metrics`)).text();
        expect(waiting).toContain('chargegate_upstream_queued_messages{station="CP001"} 9');
        expect(
          Number(/chargegate_upstream_oldest_queued_seconds\{station="CP001"\} ([\d.]+)/.exec(waiting)?.[1]),
        ).toBeGreaterThan(60);
      } finally {
        vi.useRealTimers();
      }

      csms.restore();
      expect(await waitsBetweenTries(clock, 1)).toEqual([1000]);
      await eventually(() => csms.of('StopTransaction').length === 4, UPLINK_WAIT_MS, 'the replay');
      const messages = transactionMessages(csms);
      expect(messages.map(({ action, value }) => [action, value])).toEqual(
        [1, 2, 3, 4].flatMap((n) => [
          ['StartTransaction', n * 10_000],
          ['MeterValues', n * 10_000 + 500],
          ['StopTransaction', n * 10_000 + 1000],
        ]),
      );
      // Each session's MeterValues and Stop name the id the CSMS gave its Start, never chargegate's.
      for (let i = 0; i < 4; i += 1) {
        const csmsId = 5001 + i;
        expect(messages.slice(i * 3 + 1, i * 3 + 3).map(({ params }) => params.transactionId)).toEqual([
          csmsId,
          csmsId,
        ]);
      }
      expect([online, ...offline]).not.toContain(5001);
      // After the replay, the connectors' current statuses (not their history).
      await eventually(() => csms.of('StatusNotification').length > 0, UPLINK_WAIT_MS, 'the statuses');
      expect(csms.of('StatusNotification')).toEqual([{ connectorId: 1, status: 'Finishing', errorCode: 'NoError' }]);

      // A RemoteStopTransaction naming the CSMS's id stops chargegate's session on the station.
      const running = await station.startTransaction({ connectorId: 2, idTag: 'TAG-REMOTE', meterStart: 0 });
      await eventually(() => csms.of('StartTransaction').length === 5, UPLINK_WAIT_MS, 'the fifth start');
      expect(await csms.call('CP001', 'RemoteStopTransaction', { transactionId: 5005 })).toEqual({
        status: 'Accepted',
      });
      expect((await station.nextRemoteStop()).transactionId).toBe(running);
      await eventually(() => csms.of('StopTransaction').length === 5, UPLINK_WAIT_MS, 'the remote stop upstream');
      expect(csms.of('StopTransaction')[4]).toMatchObject({ transactionId: 5005, reason: 'Remote' });
      // An id the CSMS never gave for this station stops nothing.
      expect(await csms.call('CP001', 'RemoteStopTransaction', { transactionId: running })).toEqual({
        status: 'Rejected',
      });

      await eventually(async () => {
        const h = await health(t);
        return h.status === 'ok' && (h.stations as Array<{ queued: number }>)[0]?.queued === 0;
      }, UPLINK_WAIT_MS);
      const metrics = await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/metrics`)).text();
      expect(metrics).toContain('chargegate_upstream_connected{station="CP001"} 1');
      expect(metrics).toContain('chargegate_upstream_queued_messages{station="CP001"} 0');
      expect(metrics).toMatch(/chargegate_upstream_oldest_queued_seconds\{station="CP001"\} 0/);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'every other message a 1.6 station sends reaches the CSMS unchanged; an Authorize the CSMS was asked is not sent twice; SignCertificate stays with chargegate',
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({ ...siteWith(), ...uplinkConfig(csms) });
      putIdTag(t.db, { idTag: 'TAG-LOCAL', status: 'Accepted', expiresAt: null, siteId: null });
      const station = await t.connect();
      await station.boot();
      // Live messages go once the link is accepted and caught up: a heartbeat that arrives says it is.
      await eventually(
        async () => (await station.heartbeat(), csms.of('Heartbeat').length > 0),
        UPLINK_WAIT_MS,
        'the link caught up',
      );
      const now = new Date().toISOString();
      const sent: Array<[string, Record<string, unknown>]> = [
        ['BootNotification', { chargePointVendor: 'Acme', chargePointModel: 'Wallbox 9', firmwareVersion: '2.1' }],
        ['StatusNotification', { connectorId: 1, status: 'Available', errorCode: 'NoError', timestamp: now }],
        // A connector the config does not list: answered and warned about here, still the CSMS's to know.
        ['StatusNotification', { connectorId: 3, status: 'Faulted', errorCode: 'GroundFailure' }],
        ['DataTransfer', { vendorId: 'acme', messageId: 'diag', data: '{"x":1}' }],
        ['DiagnosticsStatusNotification', { status: 'Uploaded' }],
        ['FirmwareStatusNotification', { status: 'Installed' }],
        ['LogStatusNotification', { status: 'Uploaded', requestId: 7 }],
        ['SignedFirmwareStatusNotification', { status: 'SignatureVerified', requestId: 8 }],
        [
          'MeterValues',
          {
            connectorId: 0,
            meterValue: [
              { timestamp: now, sampledValue: [{ value: '1234', measurand: 'Energy.Active.Import.Register' }] },
            ],
          },
        ],
        ['SecurityEventNotification', { type: 'SettingSystemTime', timestamp: now }],
        ['Authorize', { idTag: 'TAG-CSMS' }],
        ['Authorize', { idTag: 'TAG-LOCAL' }],
      ];
      for (const [action, params] of sent) await station.call(action, params);
      await expect(station.call('SignCertificate', { csr: 'not forwarded' })).rejects.toThrow();

      for (const [action, params] of sent)
        await eventually(
          () => csms.of(action).some((received) => JSON.stringify(received) === JSON.stringify(params)),
          UPLINK_WAIT_MS,
          `${action} ${JSON.stringify(params)} at the CSMS`,
        );
      // TAG-CSMS was decided by asking the CSMS, TAG-LOCAL by the local list and then forwarded: each reached it once.
      expect(csms.of('Authorize')).toEqual([{ idTag: 'TAG-CSMS' }, { idTag: 'TAG-LOCAL' }]);
      expect(csms.of('SignCertificate')).toEqual([]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "SendLocalList feeds chargegate's own list after the installer's entries: with the CSMS cut, the station's Authorize is decided from it; GetLocalListVersion agrees",
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({ ...siteWith(), ...uplinkConfig(csms) });
      putIdTag(t.db, { idTag: 'TAG-SITE', status: 'Accepted', expiresAt: null, siteId: null });
      const station = await t.connect();
      await station.boot();
      await eventually(() => csms.isConnected('CP001'), UPLINK_WAIT_MS, 'the uplink');
      const version = () => csms.call('CP001', 'GetLocalListVersion', {});
      expect(await version()).toEqual({ listVersion: 0 });

      const expiryDate = '2099-01-01T00:00:00.000Z';
      const full = {
        listVersion: 1,
        updateType: 'Full',
        localAuthorizationList: [
          { idTag: 'TAG-FLEET', idTagInfo: { status: 'Accepted', expiryDate, parentIdTag: 'FLEET' } },
          { idTag: 'TAG-GONE', idTagInfo: { status: 'Accepted' } },
          { idTag: 'TAG-SITE', idTagInfo: { status: 'Blocked' } },
        ],
      };
      expect(await csms.call('CP001', 'SendLocalList', full)).toEqual({ status: 'Accepted' });
      const differential = {
        listVersion: 2,
        updateType: 'Differential',
        localAuthorizationList: [{ idTag: 'TAG-GONE' }, { idTag: 'tag-new', idTagInfo: { status: 'Blocked' } }],
      };
      expect(await csms.call('CP001', 'SendLocalList', differential)).toEqual({ status: 'Accepted' });
      // Relayed: the station holds the same list.
      expect([...station.localList.keys()]).toEqual(['TAG-FLEET', 'TAG-SITE', 'tag-new']);
      expect(await version()).toEqual({ listVersion: 2 });

      // A list the station does not take is not taken here either.
      station.handle('SendLocalList', () => ({ status: 'Failed' }));
      expect(await csms.call('CP001', 'SendLocalList', { listVersion: 3, updateType: 'Full' })).toEqual({
        status: 'Failed',
      });
      expect(await version()).toEqual({ listVersion: 2 });
      // A station whose list is not chargegate's copy: 0, so the CSMS sends a Full list both take.
      station.localListVersion = 9;
      expect(await version()).toEqual({ listVersion: 0 });
      station.localListVersion = 2;

      // Kept in the database, listed after the installer's entries, each marked with its source.
      const listed = await runCliJson<{ idTags: unknown[] }>(['idtag', 'list', '--config', t.temp.configPath]);
      const csmsEntry = (idTag: string, status: string, more: object = {}) =>
        expect.objectContaining({ idTag, status, source: 'csms', stationId: 'CP001', listVersion: 2, ...more });
      expect(listed.data.idTags).toEqual([
        expect.objectContaining({ idTag: 'TAG-SITE', status: 'Accepted', source: 'installer' }),
        csmsEntry('TAG-FLEET', 'Accepted', { expiresAt: expiryDate, parentIdTag: 'FLEET' }),
        csmsEntry('tag-new', 'Blocked'),
        csmsEntry('TAG-SITE', 'Blocked'),
      ]);

      const remove = await runCli(['idtag', 'remove', 'TAG-FLEET', '--config', t.temp.configPath]);
      expect(remove).toMatchObject({ code: 1, stderr: expect.stringContaining('only the CSMS changes it') });

      await csms.cutOff();
      expect(await station.authorize('TAG-FLEET')).toEqual({ status: 'Accepted', expiryDate, parentIdTag: 'FLEET' });
      expect(await station.authorize('TAG-NEW')).toEqual({ status: 'Blocked' });
      expect(await station.authorize('TAG-GONE')).toEqual({ status: 'Invalid' });
      // The installer's entry keeps its place before the CSMS's.
      expect(await station.authorize('TAG-SITE')).toEqual({ status: 'Accepted' });
      expect(
        t
          .logged('authorization decided')
          .filter((l) => l.idTag !== 'TAG-GONE')
          .map((l) => [l.idTag, l.source]),
      ).toEqual([
        ['TAG-FLEET', 'local'],
        ['TAG-NEW', 'local'],
        ['TAG-SITE', 'local'],
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "the CSMS's RemoteStart/StopTransaction are the API's remote start and stop: the same checks, log lines and webhooks",
    async () => {
      const csms = await TestCsms.startForTest();
      const receiver = await receiverForTest();
      const t = await daemonForTest({
        ...siteWith([{ id: 'partner', url: receiver.url('/events'), events: ['StartTransaction', 'StopTransaction'] }]),
        ...uplinkConfig(csms),
      });
      putIdTag(t.db, { idTag: 'TAG-REMOTE', status: 'Accepted', expiresAt: null, siteId: null });
      const station = await t.connect();
      await station.boot();
      await eventually(() => csms.isConnected('CP001'), UPLINK_WAIT_MS, 'the uplink');
      const command = (action: string, params: object) => csms.call('CP001', action, params);

      expect(await command('RemoteStartTransaction', { connectorId: 2, idTag: 'TAG-REMOTE' })).toEqual({
        status: 'Accepted',
      });
      const started = await station.nextRemoteStart();
      await eventually(() => csms.of('StartTransaction').length === 1, UPLINK_WAIT_MS, 'the start upstream');
      expect(await command('RemoteStopTransaction', { transactionId: 5001 })).toEqual({ status: 'Accepted' });
      expect((await station.nextRemoteStop()).transactionId).toBe(started.transactionId);
      await receiver.waitForCount(2, UPLINK_WAIT_MS);
      expect(t.logged('remote start')).toEqual([
        expect.objectContaining({ by: 'csms', stationId: 'CP001', connectorId: 2, status: 'Accepted' }),
      ]);
      expect(t.logged('remote stop')).toEqual([
        expect.objectContaining({ by: 'csms', stationId: 'CP001', transactionId: started.transactionId }),
      ]);

      // Refused before the station hears of them, as the API refuses them: a transaction that is over, a connector
      // the config does not give the station.
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the stop upstream');
      expect(await command('RemoteStopTransaction', { transactionId: 5001 })).toEqual({ status: 'Rejected' });
      expect(await command('RemoteStartTransaction', { connectorId: 7, idTag: 'TAG-REMOTE' })).toEqual({
        status: 'Rejected',
      });
      expect(t.logged('CSMS command refused: answered Rejected').map((l) => l.action)).toEqual([
        'RemoteStopTransaction',
        'RemoteStartTransaction',
      ]);
      expect(station.received.map((r) => r.action)).toEqual(['RemoteStartTransaction', 'RemoteStopTransaction']);

      // Without a connectorId the station picks one.
      expect(await command('RemoteStartTransaction', { idTag: 'TAG-REMOTE' })).toEqual({ status: 'Accepted' });
      expect(await station.nextRemoteStart()).toMatchObject({ connectorId: 1, idTag: 'TAG-REMOTE' });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a CSMS answering CALLERROR: tried transactionMessageAttempts times, then dropped and counted with the rest of its transaction',
    async () => {
      const csms = await TestCsms.startForTest();
      csms.behaviour = (m) =>
        m.action === 'StartTransaction' && m.params.idTag === 'TAG-REFUSED' ? 'callerror' : undefined;
      const { t, station } = await linkedSite(csms, { transactionMessageAttempts: 3 });
      const refused = await station.startTransaction({ connectorId: 1, idTag: 'TAG-REFUSED', meterStart: 0 });
      await station.stopTransaction({ transactionId: refused, meterStop: 100 });
      await session(station, 7);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the next session upstream');
      expect(csms.of('StartTransaction').filter((p) => p.idTag === 'TAG-REFUSED')).toHaveLength(3);
      // The refused transaction's stop never reaches the CSMS: it would name a transaction it does not know.
      expect(csms.of('StopTransaction')).toEqual([expect.objectContaining({ meterStop: 71_000, transactionId: 5001 })]);
      await eventually(
        async () => ((await health(t)).stations as Array<{ dropped: number }>)[0]?.dropped === 2,
        UPLINK_WAIT_MS,
        'the drops counted',
      );
      expect(t.logged('CSMS refused a queued message every time: dropped')).toHaveLength(1);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "a CSMS's own trouble (GenericError, InternalError) uses up no attempt: retried from timeoutMs on, never dropped",
    async () => {
      const csms = await TestCsms.startForTest();
      // CitrineOS answers a call crossing one of its own with GenericError, and errs while it starts up.
      const troubles = ['GenericError', 'InternalError', 'GenericError', 'InternalError'];
      csms.behaviour = (m) => {
        if (m.action !== 'StartTransaction') return undefined;
        const callerror = troubles.shift();
        return callerror ? { callerror } : undefined;
      };
      const clock = new ManualClock();
      const t = await daemonForTest(
        {
          ...siteWith(),
          upstream: {
            timeoutMs: 500,
            csms: {
              url: csms.url,
              securityProfile: 0,
              transactionMessageAttempts: 3,
              transactionMessageRetryIntervalS: 10,
            },
          },
        },
        { linkClock: clock },
      );
      const station = await t.connect();
      await station.boot();
      await session(station, 1);
      // Waits of 0.5, 1, 2 and 4 s: doubling from timeoutMs up to the interval (10 s), not the interval from the first.
      expect(await waitsBetweenTries(clock, 4)).toEqual([500, 1000, 2000, 4000]);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the session upstream');
      expect(csms.of('StartTransaction')).toHaveLength(5);
      expect(transactionMessages(csms).map(({ action, value }) => [action, value])).toEqual([
        ['StartTransaction', 10_000],
        ['StartTransaction', 10_000],
        ['StartTransaction', 10_000],
        ['StartTransaction', 10_000],
        ['StartTransaction', 10_000],
        ['MeterValues', 10_500],
        ['StopTransaction', 11_000],
      ]);
      expect(t.logged('CSMS refused a queued message every time: dropped')).toEqual([]);
      expect(((await health(t)).stations as Array<{ dropped: number }>)[0]?.dropped).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a CSMS that takes the socket and closes it after BootNotification: reconnects back off (1 s doubling), never reset by the accepted socket',
    async () => {
      const csms = await TestCsms.startForTest();
      csms.behaviour = (m) => {
        if (m.action === 'BootNotification') setTimeout(() => void csms.drop(m.identity), 50);
        return undefined;
      };
      const clock = new ManualClock();
      const t = await daemonForTest({ ...siteWith(), ...uplinkConfig(csms) }, { linkClock: clock });
      await (await t.connect()).boot();
      // Waits of 1, 2 and 4 s after each close (reset by every accepted socket, they were 1 s each: 29 boots in 30 s).
      expect(await waitsBetweenTries(clock, 3)).toEqual([1000, 2000, 4000]);
      await eventually(() => csms.of('BootNotification').length === 4, UPLINK_WAIT_MS, 'the fourth boot');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a CSMS that never answers: the message is tried again with growing waits (no tight loop), and delivered once it answers',
    async () => {
      const csms = await TestCsms.startForTest();
      let silent = true;
      csms.behaviour = (m) => (m.action === 'StartTransaction' && silent ? 'silent' : undefined);
      const clock = new ManualClock();
      const t = await daemonForTest(
        {
          ...siteWith(),
          upstream: {
            timeoutMs: 200,
            csms: { url: csms.url, securityProfile: 0, transactionMessageRetryIntervalS: 1 },
          },
        },
        { linkClock: clock },
      );
      const station = await t.connect();
      await station.boot();
      // The station is never held up by the CSMS.
      const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-WAIT', meterStart: 0 });
      await station.stopTransaction({ transactionId, meterStop: 10 });
      // After each 200 ms timeout a wait of 0.2, 0.4, 0.8, then 1 s (the interval) before the next try: no tight loop.
      expect(await waitsBetweenTries(clock, 4)).toEqual([200, 400, 800, 1000]);
      // The last wait's try is on its way over the socket; the clock stands, so no sixth follows.
      await eventually(() => csms.of('StartTransaction').length >= 5, UPLINK_WAIT_MS, 'the fifth try');
      expect(csms.of('StartTransaction')).toHaveLength(5);
      expect(csms.of('StopTransaction')).toHaveLength(0);
      silent = false;
      await waitsBetweenTries(clock, 1);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the stop once the CSMS answers');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a CSMS that keeps not answering one message: the waits between tries stop growing at the retry interval',
    async () => {
      const csms = await TestCsms.startForTest();
      csms.behaviour = (m) => (m.action === 'StartTransaction' ? 'silent' : undefined);
      const clock = new ManualClock();
      const t = await daemonForTest(
        {
          ...siteWith(),
          upstream: {
            // Not much less: a BootNotification unanswered on a loaded machine is asked again a minute later.
            timeoutMs: 300,
            csms: { url: csms.url, securityProfile: 0, transactionMessageRetryIntervalS: 2 },
          },
        },
        { linkClock: clock },
      );
      const station = await t.connect();
      await station.boot();
      await station.startTransaction({ connectorId: 1, idTag: 'TAG-SILENT', meterStart: 0 });
      // Doubling from 300 ms, capped at the 2 s interval: without the cap, 2.4 and 4.8 s.
      expect(await waitsBetweenTries(clock, 6)).toEqual([300, 600, 1200, 2000, 2000, 2000]);
      await eventually(() => csms.of('StartTransaction').length >= 7, UPLINK_WAIT_MS, 'the seventh try');
      expect(csms.of('StartTransaction')).toHaveLength(7);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a signed Begin reading sent without a transactionId while the CSMS is away: queued under its transaction, delivered with the id the CSMS gave it',
    async () => {
      const csms = await TestCsms.startForTest();
      const clock = new ManualClock(Date.now());
      const t = await daemonForTest({ ...siteWith(), ...uplinkConfig(csms) }, { linkClock: clock });
      const station = await t.connect();
      await station.boot();
      await eventually(() => csms.of('BootNotification').length > 0, UPLINK_WAIT_MS, 'the uplink boot');
      await csms.cutOff();
      const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-SIGNED', meterStart: 0 });
      const begin = simulatedRecord(0, 'B');
      await station.signedMeterValue({ connectorId: 1, value: begin, context: 'Transaction.Begin' });
      await station.stopTransaction({ transactionId, meterStop: 1000 });
      csms.restore();
      await waitsBetweenTries(clock, 1);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the replay');
      expect(csms.of('MeterValues')).toEqual([
        expect.objectContaining({
          connectorId: 1,
          transactionId: 5001,
          meterValue: [expect.objectContaining({ sampledValue: [expect.objectContaining({ value: begin })] })],
        }),
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "Authorize after the station's link was closed and made anew goes over the new link",
    async () => {
      const csms = await TestCsms.startForTest();
      const { t, station } = await linkedSite(csms);
      await eventually(() => csms.of('BootNotification').length === 1, UPLINK_WAIT_MS, 'the uplink boot');
      expect(await station.authorize('TAG-UP-1')).toEqual({ status: 'Accepted' });
      await station.close();
      await eventually(
        () => t.logged('uplink closed: station gone and nothing left to send').some((l) => l.stationId === 'CP001'),
        UPLINK_WAIT_MS,
        'the link closed',
      );
      await station.reconnect();
      await station.boot();
      await eventually(
        async () =>
          csms.of('BootNotification').length === 2 &&
          ((await health(t)).stations as Array<{ connected: boolean }>)[0]?.connected,
        UPLINK_WAIT_MS,
        'the new link accepted',
      );
      expect(await station.authorize('TAG-UP-2')).toEqual({ status: 'Accepted' });
      expect(csms.of('Authorize')).toEqual([{ idTag: 'TAG-UP-1' }, { idTag: 'TAG-UP-2' }]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a CSMS answering Rejected holds the queue (warning) while the station charges on; Accepted, the queue goes; a start the CSMS does not accept is logged and the local decision stands',
    async () => {
      const csms = await TestCsms.startForTest();
      csms.bootStatus = 'Rejected';
      csms.behaviour = (m) =>
        m.action === 'StartTransaction'
          ? { answer: { transactionId: 7001, idTagInfo: { status: 'Blocked' } } }
          : undefined;
      const clock = new ManualClock(Date.now());
      const t = await daemonForTest({ ...siteWith(), ...uplinkConfig(csms) }, { linkClock: clock });
      const station = await t.connect();
      await station.boot();
      await session(station, 1);
      // Asked again at the CSMS's interval (1 s).
      expect(await waitsBetweenTries(clock, 1)).toEqual([1000]);
      await eventually(() => csms.of('BootNotification').length === 2, UPLINK_WAIT_MS, 'the boot asked again');
      expect(csms.of('StartTransaction')).toEqual([]);
      await eventually(
        async () => {
          const h = await health(t);
          const [link] = h.stations as Array<Record<string, unknown>>;
          return h.status === 'warning' && link?.state === 'rejected' && link.queued === 3;
        },
        UPLINK_WAIT_MS,
        'the link rejected, its queue held',
      );
      expect(t.events('StopTransaction')).toHaveLength(1);

      csms.bootStatus = 'Accepted';
      await waitsBetweenTries(clock, 1);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the queue sent');
      expect(csms.of('StopTransaction')[0]).toMatchObject({ transactionId: 7001 });
      expect(t.logged('CSMS did not accept a started transaction; the local decision stands')).toEqual([
        expect.objectContaining({ csmsTransactionId: 7001, status: 'Blocked' }),
      ]);
      expect(t.events('StartTransaction')).toHaveLength(1);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "the CSMS's 1.6 commands reach the station and its answers come back, a CALLERROR too; with the station away, a GenericError",
    async () => {
      const csms = await TestCsms.startForTest();
      const release = csms.holdAnswers('StopTransaction');
      const { station } = await linkedSite(csms);
      await eventually(() => csms.isConnected('CP001'), UPLINK_WAIT_MS, 'the uplink');
      const call = (action: string, params: Record<string, unknown>) => csms.call('CP001', action, params);
      expect(await call('Reset', { type: 'Soft' })).toEqual({ status: 'Accepted' });
      expect(await call('ChangeAvailability', { connectorId: 1, type: 'Inoperative' })).toEqual({ status: 'Accepted' });
      expect(await call('UnlockConnector', { connectorId: 1 })).toEqual({ status: 'Unlocked' });
      expect(await call('ChangeConfiguration', { key: 'MeterValueSampleInterval', value: '30' })).toEqual({
        status: 'Accepted',
      });
      expect(await call('GetConfiguration', { key: ['MeterValueSampleInterval'] })).toMatchObject({
        configurationKey: [expect.objectContaining({ key: 'MeterValueSampleInterval', value: '30' })],
      });
      expect(await call('TriggerMessage', { requestedMessage: 'StatusNotification', connectorId: 2 })).toEqual({
        status: 'Accepted',
      });
      await eventually(
        () => csms.of('StatusNotification').some((p) => p.connectorId === 2),
        UPLINK_WAIT_MS,
        'the triggered status, live',
      );
      expect(station.received.map((r) => r.action)).toEqual(
        expect.arrayContaining([
          'Reset',
          'ChangeAvailability',
          'UnlockConnector',
          'ChangeConfiguration',
          'TriggerMessage',
        ]),
      );
      // A call the station does not implement: its CALLERROR reaches the CSMS.
      await expect(
        call('ReserveNow', {
          connectorId: 1,
          expiryDate: new Date(Date.now() + 60_000).toISOString(),
          idTag: 'TAG-R',
          reservationId: 1,
        }),
      ).rejects.toMatchObject({ rpcErrorCode: 'NotImplemented' });

      // The station leaves with its stop still unanswered upstream: the link stays for the backlog, the station is away.
      const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-AWAY', meterStart: 0 });
      await station.stopTransaction({ transactionId, meterStop: 10 });
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the stop in flight');
      await station.close();
      await expect(call('Reset', { type: 'Soft' })).rejects.toMatchObject({ rpcErrorCode: 'GenericError' });
      release();
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'at queueLimit the oldest reading not yet answered goes, never one the CSMS already has',
    async () => {
      const csms = await TestCsms.startForTest();
      const clock = new ManualClock(Date.now());
      const t = await daemonForTest({ ...siteWith(), ...uplinkConfig(csms, { queueLimit: 3 }) }, { linkClock: clock });
      const station = await t.connect();
      await station.boot();
      const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-LIMIT', meterStart: 0 });
      const reading = (wh: number) => station.meterValues({ connectorId: 1, transactionId, wh });
      await reading(1);
      await reading(2);
      // Answered, their deletes not yet written (in batches, ACK_FLUSH_MS): the moment the limit must skip them.
      await eventually(
        async () => ((await health(t)).stations as Array<{ queued: number }>)[0]?.queued === 0,
        UPLINK_WAIT_MS,
        'the first readings answered',
      );
      await csms.cutOff();
      for (const wh of [3, 4, 5, 6]) await reading(wh);
      // At the limit: critical on /health, and the metrics say so.
      expect(await health(t)).toMatchObject({
        status: 'critical',
        stations: [expect.objectContaining({ stationId: 'CP001', queued: 3, dropped: 1, level: 'critical' })],
      });
      const metrics = await (await fetch(`http://127.0.0.1:${t.daemon.httpPort}/metrics`)).text();
      expect(metrics).toContain('chargegate_upstream_queued_messages{station="CP001"} 3');
      expect(metrics).toContain('chargegate_upstream_dropped_messages{station="CP001"} 1');
      csms.restore();
      await waitsBetweenTries(clock, 1);
      await eventually(() => csms.of('MeterValues').length >= 5, UPLINK_WAIT_MS, 'the replay');
      await eventually(
        async () => ((await health(t)).stations as Array<{ queued: number }>)[0]?.queued === 0,
        UPLINK_WAIT_MS,
        'the queue drained',
      );
      const values = transactionMessages(csms)
        .filter(({ action }) => action === 'MeterValues')
        .map(({ value }) => value);
      expect(values).toEqual([1, 2, 4, 5, 6]);
      expect(((await health(t)).stations as Array<{ dropped: number }>)[0]?.dropped).toBe(1);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'at queueLimit the reading being sent right now (not yet answered) stays: the next one goes',
    async () => {
      const csms = await TestCsms.startForTest();
      const release = csms.holdAnswers('MeterValues');
      const { t, station } = await linkedSite(csms, { queueLimit: 3 });
      const transactionId = await station.startTransaction({ connectorId: 1, idTag: 'TAG-FLIGHT', meterStart: 0 });
      const reading = (wh: number) => station.meterValues({ connectorId: 1, transactionId, wh });
      await reading(1);
      await eventually(() => csms.of('MeterValues').length === 1, UPLINK_WAIT_MS, 'the first reading in flight');
      for (const wh of [2, 3, 4]) await reading(wh);
      release();
      await eventually(
        async () => ((await health(t)).stations as Array<{ queued: number }>)[0]?.queued === 0,
        UPLINK_WAIT_MS,
        'the queue drained',
      );
      const values = transactionMessages(csms)
        .filter(({ action }) => action === 'MeterValues')
        .map(({ value }) => value);
      expect(values).toEqual([1, 3, 4]);
      expect(((await health(t)).stations as Array<{ dropped: number }>)[0]?.dropped).toBe(1);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a frame from the CSMS larger than ocpp.maxMessageBytes closes the link before it reaches the station',
    async () => {
      const csms = await TestCsms.startForTest();
      const clock = new ManualClock(Date.now());
      const t = await daemonForTest(
        {
          ...siteWith(),
          ...uplinkConfig(csms),
          ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, maxMessageBytes: 1024 },
        },
        { linkClock: clock },
      );
      const station = await t.connect();
      station.handle('DataTransfer', () => ({ status: 'Accepted' }));
      await station.boot();
      await eventually(() => csms.of('BootNotification').length === 1, UPLINK_WAIT_MS, 'the uplink boot');
      await expect(csms.call('CP001', 'DataTransfer', { vendorId: 'csms', data: 'x'.repeat(2048) })).rejects.toThrow();
      expect(station.received.map((r) => r.action)).not.toContain('DataTransfer');
      await eventually(
        () => t.logged('uplink disconnected: reconnecting').length === 1,
        UPLINK_WAIT_MS,
        'the link dropped',
      );
      // Reconnected after the back-off, it carries frames within the limit as before.
      expect(await waitsBetweenTries(clock, 1)).toEqual([1000]);
      await eventually(() => csms.of('BootNotification').length === 2, UPLINK_WAIT_MS, 'the uplink back');
      expect(await csms.call('CP001', 'DataTransfer', { vendorId: 'csms', data: 'x' })).toEqual({ status: 'Accepted' });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a station back right after its link closed: the new link sends nothing the CSMS already answered',
    async () => {
      const csms = await TestCsms.startForTest();
      const { t, station } = await linkedSite(csms);
      await session(station, 1);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the session upstream');
      // Within ACK_FLUSH_MS: the answered rows are still written, their deletes pending.
      await station.close();
      await eventually(
        () => t.logged('uplink closed: station gone and nothing left to send').length === 1,
        UPLINK_WAIT_MS,
        'the link closed',
      );
      await station.reconnect();
      await station.boot();
      await eventually(() => csms.of('BootNotification').length === 2, UPLINK_WAIT_MS, 'the new link');
      await session(station, 2);
      await eventually(() => csms.of('StopTransaction').length >= 2, UPLINK_WAIT_MS, 'the second session upstream');
      expect(transactionMessages(csms).map(({ action, value }) => [action, value])).toEqual(
        [1, 2].flatMap((n) => [
          ['StartTransaction', n * 10_000],
          ['MeterValues', n * 10_000 + 500],
          ['StopTransaction', n * 10_000 + 1000],
        ]),
      );
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "a station's first BootNotification, sent once its link already reached the CSMS, introduces it there and opens its queue",
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({ ...siteWith(), ...uplinkConfig(csms) });
      const station = await t.connect();
      // The link has nothing to introduce the station with until the station boots.
      await eventually(() => csms.isConnected('CP001'), UPLINK_WAIT_MS, 'the link at the CSMS');
      await station.boot({ chargePointVendor: 'Late', chargePointModel: 'Booter' });
      await session(station, 1);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the session upstream');
      expect(csms.of('BootNotification')).toEqual([
        expect.objectContaining({ chargePointVendor: 'Late', chargePointModel: 'Booter' }),
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'messages queued after the answered rows were deleted are sent (their ids never fall back below the cursor)',
    async () => {
      const csms = await TestCsms.startForTest();
      const { t, station } = await linkedSite(csms);
      await session(station, 1);
      await eventually(() => csms.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the first session upstream');
      await eventually(
        () => t.db.prepare('SELECT COUNT(*) FROM uplink_queue').pluck().get() === 0,
        UPLINK_WAIT_MS,
        'the answered rows deleted',
      );
      await session(station, 2);
      await eventually(() => csms.of('StopTransaction').length === 2, UPLINK_WAIT_MS, 'the second session upstream');
      expect(transactionMessages(csms)).toHaveLength(6);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a station admitted unknown (acceptUnknownStations) is not forwarded, and has no link, until it is paired; then it is as any station',
    async () => {
      const csms = await TestCsms.startForTest();
      const t = await daemonForTest({
        ...siteWith(),
        ocpp: { host: '127.0.0.1', port: 0, securityProfile: 0, acceptUnknownStations: true, changePollMs: 100 },
        ...uplinkConfig(csms),
      });
      putIdTag(t.db, { idTag: 'TAG-1', status: 'Accepted', expiresAt: null, siteId: null });
      putIdTag(t.db, { idTag: 'TAG-2', status: 'Accepted', expiresAt: null, siteId: null });
      const stranger = await t.connect('CP-ANY');
      expect(await stranger.boot()).toMatchObject({ status: 'Accepted' });
      await stranger.heartbeat();
      await session(stranger, 1);
      await stranger.statusNotification({ connectorId: 1, status: 'Available' });
      // Queued rows would be written in the commit of each call, before the station heard its answer.
      expect((await health(t)).stations).toEqual([]);
      expect(t.db.prepare("SELECT COUNT(*) FROM uplink_queue WHERE station_id = 'CP-ANY'").pluck().get()).toBe(0);
      expect(csms.received.filter((m) => m.identity === 'CP-ANY')).toEqual([]);

      // Paired, its socket is closed; it comes back known and gets its link, from its next messages on.
      const wasClosed = new Promise((resolve) => stranger.rpc.once('close', resolve));
      expect(
        (await runCliJson(['station', 'pair', 'CP-ANY', '--site', 's1', '--config', t.temp.configPath])).code,
      ).toBe(0);
      await wasClosed;
      const paired = await t.connect('CP-ANY');
      await paired.boot();
      await eventually(() => csms.isConnected('CP-ANY'), UPLINK_WAIT_MS, 'the link of the paired station');
      await session(paired, 2);
      await eventually(() => csms.of('StopTransaction', 'CP-ANY').length === 1, UPLINK_WAIT_MS, 'its session upstream');
      expect(transactionMessages(csms, 'CP-ANY').map((m) => m.key)).toEqual([
        'StartTransaction 20000',
        'MeterValues 20500',
        'StopTransaction 21000',
      ]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
