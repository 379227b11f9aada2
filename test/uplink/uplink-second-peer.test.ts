import { once } from 'node:events';
import { CentralSystem } from '@voltbras/ts-ocpp';
import { describe, expect, it, onTestFinished } from 'vitest';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { freePort } from '../support/free-port.js';

const UPLINK_WAIT_MS = 30_000;

interface Received {
  chargePointId: string;
  action: string;
  payload: Record<string, unknown>;
}

/**
 * A second central system chargegate did not write, independent of ocpp-rpc: @voltbras/ts-ocpp's CentralSystem
 * (OCPP 1.6-J on ws 7, its own JSON schema validation). It assigns transaction ids from
 * `firstTransactionId` and records every request in order.
 */
async function tsOcppCsms(port: number, firstTransactionId: number) {
  const received: Received[] = [];
  let nextTransactionId = firstTransactionId;
  const invalid: string[] = [];
  const cs = new CentralSystem(
    port,
    (req, { chargePointId, validationError }) => {
      if (validationError) invalid.push(`${req.action}: ${validationError.message}`);
      const { action, ocppVersion, ...payload } = req as unknown as { action: string; ocppVersion: 'v1.6-json' };
      received.push({ chargePointId, action, payload });
      const currentTime = new Date().toISOString();
      const answers: Record<string, () => object> = {
        BootNotification: () => ({ status: 'Accepted', currentTime, interval: 60 }),
        Heartbeat: () => ({ currentTime }),
        Authorize: () => ({ idTagInfo: { status: 'Accepted' } }),
        StartTransaction: () => ({ transactionId: nextTransactionId++, idTagInfo: { status: 'Accepted' } }),
        StopTransaction: () => ({}),
        MeterValues: () => ({}),
        StatusNotification: () => ({}),
      };
      const answer = answers[action]?.();
      if (!answer) throw new Error(`${action} is not handled by this test CSMS`);
      return { action, ocppVersion, ...answer } as never;
    },
    // Invalid requests reach the handler with their validation error, so the test names them instead of a CALLERROR.
    { host: '127.0.0.1', rejectInvalidRequests: false },
  );
  let connected = false;
  cs.addConnectionListener((_id, status) => (connected = status === 'connected'));
  await once((cs as unknown as { httpServer: import('node:http').Server }).httpServer, 'listening');
  return {
    received,
    invalid,
    isConnected: () => connected,
    of: (action: string) => received.filter((r) => r.action === action).map((r) => r.payload),
    call: (action: string, payload: object) =>
      cs
        .sendRequest({ chargePointId: 'CP001', ocppVersion: 'v1.6-json', action: action as never, payload } as never)
        .run(),
    close: () => cs.close(),
  };
}

describe('uplink to a second CSMS implementation (@voltbras/ts-ocpp, OCPP 1.6-J)', () => {
  it(
    'receives the sessions in order with its own ids across its own restart, and its RemoteStopTransaction stops the right one',
    async () => {
      const port = await freePort();
      const first = await tsOcppCsms(port, 7001);
      let running: { close(): Promise<void> } = first;
      onTestFinished(() => running.close());
      const t = await daemonForTest({
        upstream: {
          timeoutMs: 2000,
          csms: { url: `ws://127.0.0.1:${port}/ocpp`, securityProfile: 0, transactionMessageRetryIntervalS: 0.05 },
        },
      });
      const station = await t.connect();
      await station.boot({ chargePointVendor: 'Acme', chargePointModel: 'Wallbox 7' });
      const online = await station.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 1000 });
      await station.meterValues({ connectorId: 1, transactionId: online, wh: 1500 });
      await station.stopTransaction({ transactionId: online, meterStop: 2000, reason: 'EVDisconnected' });
      await eventually(() => first.of('StopTransaction').length === 1, UPLINK_WAIT_MS, 'the online session upstream');
      expect(first.of('StopTransaction')[0]).toMatchObject({ transactionId: 7001, meterStop: 2000 });

      // The CSMS goes away (its process restarts): two sessions happen meanwhile, charged on local decisions.
      await first.close();
      for (const n of [2, 3]) {
        const id = await station.startTransaction({ connectorId: 1, idTag: `TAG-${n}`, meterStart: n * 1000 });
        await station.stopTransaction({ transactionId: id, meterStop: n * 1000 + 500, reason: 'Local' });
      }
      const second = await tsOcppCsms(port, 9001);
      running = second;
      await eventually(() => second.of('StopTransaction').length === 2, UPLINK_WAIT_MS, 'the replay');
      const transactionMessages = second.received
        .filter((r) => ['StartTransaction', 'StopTransaction'].includes(r.action))
        .map((r) => [r.action, r.payload.meterStart ?? r.payload.meterStop, r.payload.transactionId]);
      expect(transactionMessages).toEqual([
        ['StartTransaction', 2000, undefined],
        ['StopTransaction', 2500, 9001],
        ['StartTransaction', 3000, undefined],
        ['StopTransaction', 3500, 9002],
      ]);
      expect(second.received[0]).toMatchObject({ action: 'BootNotification', payload: { chargePointVendor: 'Acme' } });

      // Its RemoteStopTransaction names its own id; chargegate stops its own session on the station.
      const remote = await station.startTransaction({ connectorId: 2, idTag: 'TAG-R', meterStart: 0 });
      await eventually(() => second.of('StartTransaction').length === 3, UPLINK_WAIT_MS, 'the third start');
      const answer = await second.call('RemoteStopTransaction', { transactionId: 9003 });
      expect(answer.extract()).toMatchObject({ status: 'Accepted' });
      expect((await station.nextRemoteStop()).transactionId).toBe(remote);
      await eventually(() => second.of('StopTransaction').length === 3, UPLINK_WAIT_MS, 'the remote stop upstream');
      expect(second.of('StopTransaction')[2]).toMatchObject({ transactionId: 9003, reason: 'Remote' });
      // Its schema validation found nothing wrong in what chargegate sent.
      expect([...first.invalid, ...second.invalid]).toEqual([]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
