import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { addImage } from '../../src/firmware/index.js';
import { apiDaemonForTest, type ApiDaemon } from '../http/api-harness.js';
import { eventually, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { updatesFirmware16, updatesFirmware201 } from '../support/firmware-station.js';
import { movableDateForTest, stationV201ForTest, tempDirForTest } from '../support/for-test.js';

/**
 * Contract 11.2 on an in-process daemon with real ocpp-rpc stations of both versions that fetch the image over real
 * HTTP: which station goes when, what a failure, a silent station, a cancel and a notification nobody asked for do.
 */

const STATIONS = ['CP001', 'CP002', 'CP003'].map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] }));
const SITES = [
  {
    id: 's1',
    stations: [...STATIONS, { id: 'CP201', chargePoints: [{ id: 'CP201-A', connectors: [1] }] }],
    meters: [],
    webhooks: [],
  },
];
const GROUPS = [
  { id: 'operators', scope: 'company:acme', permissions: ['stations:read', 'stations:operate'] },
  { id: 'cp001-only', scope: 'station:CP001', permissions: ['stations:read', 'stations:operate'] },
  { id: 'readers', scope: 'company:acme', permissions: ['stations:read'] },
];
const TIMEOUT_S = 600;

interface Rollout {
  rolloutId: string;
  state: string;
  endedAt: string | null;
  stations: Array<{ stationId: string; state: string; reason: string | null }>;
}

async function siteWithImage(): Promise<{ api: ApiDaemon; imageId: string; token: string }> {
  const api = await apiDaemonForTest({
    sites: SITES,
    groups: GROUPS,
    firmware: { stationTimeoutS: TIMEOUT_S },
  });
  const file = path.join(tempDirForTest('image'), 'fw-2.0.bin');
  writeFileSync(file, Buffer.alloc(200_000, 7));
  const { imageId } = await addImage(api.db, api.temp.dataDir, { maxImageBytes: 1e9, maxTotalBytes: 2e9 }, { file });
  return { api, imageId, token: await api.token(api.createApp('operators')) };
}

const states = (rollout: Rollout): Record<string, string> =>
  Object.fromEntries(rollout.stations.map((s) => [s.stationId, s.state]));

async function rolloutOf(api: ApiDaemon, token: string, id: string): Promise<Rollout> {
  return (await api.call('GET', `/firmware/rollouts/${id}`, { token })).body as unknown as Rollout;
}

/** A rollout of the image to a 2.0.1 station that takes the UpdateFirmware and reports nothing by itself. */
async function rolloutToSilent201() {
  const { api, imageId, token } = await siteWithImage();
  const station = await stationV201ForTest(api.url, 'CP201');
  const updates = updatesFirmware201(station, { newVersion: '3.0', silent: true });
  await station.boot();
  const created = await api.call('POST', '/firmware/rollouts', { token, body: { imageId, stationIds: ['CP201'] } });
  const id = (created.body as unknown as Rollout).rolloutId;
  await eventually(() => updates.received.length === 1);
  return { api, token, id, station, updates };
}

/** The rollout, once it ended, has failed its one station for want of progress within firmware.stationTimeoutS. */
async function expectTimedOut(api: ApiDaemon, token: string, id: string): Promise<void> {
  const failed = await eventually(async () => {
    const r = await rolloutOf(api, token, id);
    return r.endedAt !== null && r;
  });
  expect(failed.stations[0]).toMatchObject({
    state: 'failed',
    reason: `no progress for ${TIMEOUT_S} s (firmware.stationTimeoutS)`,
  });
}

describe('firmware rollouts', () => {
  it(
    'sends the idle stations first, one at a time, and the charging one after its StopTransaction',
    async () => {
      const { api, imageId, token } = await siteWithImage();
      const [charging, idle1, idle2] = await Promise.all(STATIONS.map((s) => api.connect(s.id)));
      const stations = [charging, idle1, idle2].map((station, i) => {
        const updates = updatesFirmware16(station!, { newVersion: '2.0', chunkBytes: 50_000 });
        return { station: station!, updates, id: STATIONS[i]!.id };
      });
      await Promise.all(stations.map((s) => s.station.boot({ firmwareVersion: '1.0' })));
      const transactionId = await charging!.startTransaction({ connectorId: 1, idTag: 'TAG1' });

      const created = await api.call('POST', '/firmware/rollouts', {
        token,
        body: { imageId, stationIds: ['CP001', 'CP002', 'CP003'] },
      });
      expect(created.status).toBe(201);
      const id = (created.body as unknown as Rollout).rolloutId;
      // Only one under way; the charging station listed first is passed over, not holding the slot.
      expect(states(created.body as unknown as Rollout)).toEqual({ CP001: 'waiting', CP002: 'sent', CP003: 'waiting' });
      expect((created.body as unknown as Rollout).stations[0]!.reason).toMatch(/charging/);
      const shown = await api.call('GET', '/stations/CP002', { token });
      expect(shown.body.operation).toEqual({
        kind: 'firmware',
        id,
        state: expect.stringMatching(/^(sent|downloading)$/),
      });
      // The status page (contract 11: read-only there too) shows it in the station's row.
      const status = (await (await fetch(`http://127.0.0.1:${api.daemon.httpPort}/status.json`)).json()) as {
        stations: Array<{ stationId: string; longOperation: unknown }>;
      };
      expect(status.stations.find((s) => s.stationId === 'CP002')?.longOperation).toEqual({
        kind: 'firmware',
        id,
        state: expect.stringMatching(/^(sent|downloading|downloaded|installing)$/),
      });
      expect(status.stations.find((s) => s.stationId === 'CP003')?.longOperation).toEqual({
        kind: 'firmware',
        id,
        state: 'waiting',
      });

      await eventually(async () => states(await rolloutOf(api, token, id)).CP003 === 'installed', 20_000);
      expect(states(await rolloutOf(api, token, id))).toMatchObject({ CP001: 'waiting', CP002: 'installed' });
      expect(charging!.received.some((r) => r.action === 'UpdateFirmware')).toBe(false);

      await charging!.stopTransaction({ transactionId });
      const done = await eventually(async () => {
        const r = await rolloutOf(api, token, id);
        return r.endedAt !== null && r;
      }, 20_000);
      expect(done.state).toBe('done');
      expect(states(done)).toEqual({ CP001: 'installed', CP002: 'installed', CP003: 'installed' });
      for (const { updates } of stations) {
        expect(updates.errors).toEqual([]);
        expect(updates.images.map((image) => image.equals(Buffer.alloc(200_000, 7)))).toEqual([true]);
      }
      // The order they were sent in: the audit of each station says UpdateFirmware, by the API client.
      const audit = await api.call('GET', '/stations/CP001', { token });
      expect(audit.body.firmwareVersion).toBe('2.0');
      expect(audit.body.operation).toBeNull();
      expect(audit.body.operations).toContainEqual(
        expect.objectContaining({
          action: 'UpdateFirmware',
          request: expect.objectContaining({ location: expect.stringMatching(/\/firmware\/\(token\)\/fw-2\.0\.bin$/) }),
          answer: { status: 'Accepted' },
        }),
      );
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a station that starts charging while its UpdateFirmware waits in its queue is not sent it until it stops',
    async () => {
      const { api, imageId, token } = await siteWithImage();
      const cp1 = await api.connect('CP001');
      const updates = updatesFirmware16(cp1, { newVersion: '2.0' });
      await cp1.boot({ firmwareVersion: '1.0' });
      let answerReset = (): void => undefined;
      // Answered when the test says (or when the connection closes, should the test fail first).
      cp1.handle(
        'Reset',
        (_params, signal) =>
          new Promise((resolve) => {
            answerReset = () => resolve({ status: 'Accepted' });
            signal.addEventListener('abort', answerReset);
          }),
      );
      const reset = api.call('POST', '/stations/CP001/reset', { token, body: { type: 'soft' } });
      await eventually(() => cp1.received.some((r) => r.action === 'Reset'));

      const created = await api.call('POST', '/firmware/rollouts', { token, body: { imageId, stationIds: ['CP001'] } });
      const id = (created.body as unknown as Rollout).rolloutId;
      // Queued behind the Reset: not sent yet, so not recorded as sent.
      expect((created.body as unknown as Rollout).stations).toEqual([
        expect.objectContaining({ stationId: 'CP001', state: 'waiting', reason: expect.stringMatching(/queued/) }),
      ]);
      const transactionId = await cp1.startTransaction({ connectorId: 1, idTag: 'TAG1' });
      answerReset();
      expect((await reset).status).toBe(200);
      // A call of the station's own answered: anything the gateway sent before it has arrived.
      await cp1.call('Heartbeat', {});
      expect(cp1.received.some((r) => r.action === 'UpdateFirmware')).toBe(false);
      const waiting = await rolloutOf(api, token, id);
      expect(waiting.stations).toEqual([
        expect.objectContaining({ stationId: 'CP001', state: 'waiting', reason: expect.stringMatching(/charging/) }),
      ]);

      await cp1.stopTransaction({ transactionId });
      const done = await eventually(async () => {
        const r = await rolloutOf(api, token, id);
        return r.endedAt !== null && r;
      }, 20_000);
      expect(states(done)).toEqual({ CP001: 'installed' });
      expect(updates.received).toHaveLength(1);
      expect(updates.errors).toEqual([]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a failure status fails the station and stops the rollout; with continueOnFailure the others go on',
    async () => {
      const { api, imageId, token } = await siteWithImage();
      const [cp1, cp2, cp3] = await Promise.all(STATIONS.map((s) => api.connect(s.id)));
      updatesFirmware16(cp1!, { newVersion: '2.0', fail: 'DownloadFailed' });
      updatesFirmware16(cp2!, { newVersion: '2.0' });
      updatesFirmware16(cp3!, { newVersion: '2.0', fail: 'InstallationFailed' });
      await Promise.all([cp1, cp2, cp3].map((s) => s!.boot({ firmwareVersion: '1.0' })));

      const stopped = await api.call('POST', '/firmware/rollouts', {
        token,
        body: { imageId, stationIds: ['CP001', 'CP002'] },
      });
      const first = await eventually(async () => {
        const r = await rolloutOf(api, token, (stopped.body as unknown as Rollout).rolloutId);
        return r.endedAt !== null && r;
      });
      expect(first.state).toBe('stopped');
      expect(first.stations).toEqual([
        expect.objectContaining({ stationId: 'CP001', state: 'failed', reason: 'the station reported DownloadFailed' }),
        expect.objectContaining({
          stationId: 'CP002',
          state: 'cancelled',
          reason: expect.stringMatching(/CP001 failed/),
        }),
      ]);
      expect(cp2!.received.some((r) => r.action === 'UpdateFirmware')).toBe(false);

      const going = await api.call('POST', '/firmware/rollouts', {
        token,
        body: { imageId, stationIds: ['CP003', 'CP002'], continueOnFailure: true },
      });
      const second = await eventually(async () => {
        const r = await rolloutOf(api, token, (going.body as unknown as Rollout).rolloutId);
        return r.endedAt !== null && r;
      }, 20_000);
      expect(second.state).toBe('done');
      expect(states(second)).toEqual({ CP003: 'failed', CP002: 'installed' });
      expect(second.stations[0]!.reason).toBe('the station reported InstallationFailed');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'fails a station that shows no progress for firmware.stationTimeoutS (the clock moved, not waited for)',
    async () => {
      movableDateForTest();
      const { api, token, id, updates } = await rolloutToSilent201();
      expect(updates.received[0]).toMatchObject({
        requestId: expect.any(Number),
        firmware: { location: expect.stringMatching(/\/firmware\/[0-9a-f]{32}\/fw-2\.0\.bin$/) },
      });
      vi.setSystemTime(Date.now() + (TIMEOUT_S - 5) * 1000);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(states(await rolloutOf(api, token, id))).toEqual({ CP201: 'sent' });
      vi.setSystemTime(Date.now() + 10_000);
      await expectTimedOut(api, token, id);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a station repeating Downloading and DownloadPaused makes no progress: stationTimeoutS fails it',
    async () => {
      movableDateForTest();
      const { api, token, id, station: stuck, updates } = await rolloutToSilent201();
      const requestId = updates.received[0]!.requestId as number;
      await stuck.call('FirmwareStatusNotification', { status: 'Downloading', requestId });
      expect(states(await rolloutOf(api, token, id))).toEqual({ CP201: 'downloading' });

      vi.setSystemTime(Date.now() + (TIMEOUT_S - 5) * 1000);
      for (const status of ['DownloadPaused', 'Downloading', 'DownloadPaused'] as const)
        await stuck.call('FirmwareStatusNotification', { status, requestId });
      vi.setSystemTime(Date.now() + 10_000);
      await expectTimedOut(api, token, id);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'DELETE cancels the stations not yet sent; the one under way finishes',
    async () => {
      const { api, imageId, token } = await siteWithImage();
      const [cp1, cp2, cp3] = await Promise.all(STATIONS.map((s) => api.connect(s.id)));
      const slow = updatesFirmware16(cp1!, { newVersion: '2.0', silent: true });
      await Promise.all([cp1, cp2, cp3].map((s) => s!.boot({ firmwareVersion: '1.0' })));
      const created = await api.call('POST', '/firmware/rollouts', {
        token,
        body: { imageId, stationIds: ['CP001', 'CP002', 'CP003'] },
      });
      const id = (created.body as unknown as Rollout).rolloutId;
      await eventually(() => slow.received.length === 1);

      const cancelled = await api.call('DELETE', `/firmware/rollouts/${id}`, { token });
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ state: 'cancelled', endedAt: null });
      expect(states(cancelled.body as unknown as Rollout)).toEqual({
        CP001: 'sent',
        CP002: 'cancelled',
        CP003: 'cancelled',
      });
      await cp1!.call('FirmwareStatusNotification', { status: 'Downloading' });
      await cp1!.boot({ firmwareVersion: '2.0' });
      const ended = await rolloutOf(api, token, id);
      expect(ended).toMatchObject({ state: 'cancelled', endedAt: expect.any(String) });
      expect(states(ended)).toEqual({ CP001: 'installed', CP002: 'cancelled', CP003: 'cancelled' });
      expect([cp2, cp3].every((s) => !s!.received.some((r) => r.action === 'UpdateFirmware'))).toBe(true);
      expect((await api.call('DELETE', '/firmware/rollouts/ro-nosuch', { token })).status).toBe(404);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a FirmwareStatusNotification nobody asked for changes nothing and is logged',
    async () => {
      const { api, imageId, token } = await siteWithImage();
      const cp201 = await stationV201ForTest(api.url, 'CP201');
      const updates = updatesFirmware201(cp201, { newVersion: '3.0', silent: true });
      await cp201.boot();
      const cp1 = await api.connect('CP001');
      await cp1.boot({ firmwareVersion: '1.0' });

      // A station in no rollout.
      await cp1.call('FirmwareStatusNotification', { status: 'Installed' });
      await cp1.boot({ firmwareVersion: '9.9' });
      expect((await api.call('GET', '/stations/CP001', { token })).body.operation).toBeNull();

      // A 2.0.1 station in a rollout, about another request (a CSMS's update through the uplink, say).
      const created = await api.call('POST', '/firmware/rollouts', { token, body: { imageId, stationIds: ['CP201'] } });
      const id = (created.body as unknown as Rollout).rolloutId;
      await eventually(() => updates.received.length === 1);
      const requestId = updates.received[0]!.requestId as number;
      await cp201.call('FirmwareStatusNotification', { status: 'InstallationFailed', requestId: requestId + 1 });
      expect(states(await rolloutOf(api, token, id))).toEqual({ CP201: 'sent' });
      expect(api.logged('firmware status nobody asked for: nothing changed')).toEqual([
        expect.objectContaining({ stationId: 'CP001', status: 'Installed' }),
        expect.objectContaining({ stationId: 'CP201', status: 'InstallationFailed', requestId: requestId + 1 }),
      ]);
      await cp201.call('FirmwareStatusNotification', { status: 'Installed', requestId });
      expect(states(await rolloutOf(api, token, id))).toEqual({ CP201: 'installed' });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'lets a caller start, see and cancel only rollouts of stations its groups reach, with the permission for each',
    async () => {
      const { api, imageId, token } = await siteWithImage();
      const narrow = await api.token(api.createApp('cp001-only'));
      const reader = await api.token(api.createApp('readers'));
      const body = { imageId, stationIds: ['CP001', 'CP002'] };
      expect((await api.call('POST', '/firmware/rollouts', { token: narrow, body })).status).toBe(404);
      expect((await api.call('POST', '/firmware/rollouts', { token: reader, body })).status).toBe(403);
      expect((await api.call('POST', '/firmware/rollouts', { token, body: { imageId } })).status).toBe(400);
      expect(
        (await api.call('POST', '/firmware/rollouts', { token, body: { imageId: 'nosuchimage', siteId: 's1' } })).body,
      ).toMatchObject({ error: 'invalid_request', message: expect.stringMatching(/no firmware image/) });

      const created = await api.call('POST', '/firmware/rollouts', { token, body });
      expect(created.status).toBe(201);
      const id = (created.body as unknown as Rollout).rolloutId;
      expect((await api.call('GET', `/firmware/rollouts/${id}`, { token: narrow })).status).toBe(404);
      expect((await api.call('DELETE', `/firmware/rollouts/${id}`, { token: narrow })).status).toBe(404);
      expect((await api.call('GET', `/firmware/rollouts/${id}`, { token: reader })).status).toBe(200);
      expect((await api.call('DELETE', `/firmware/rollouts/${id}`, { token: reader })).status).toBe(403);
      // A station in a rollout not finished is in no other.
      const again = await api.call('POST', '/firmware/rollouts', { token, body: { imageId, stationIds: ['CP002'] } });
      expect(again).toMatchObject({ status: 409, body: { error: 'conflict' } });
      const mine = await api.call('POST', '/firmware/rollouts', {
        token: narrow,
        body: { imageId, stationIds: ['CP001'] },
      });
      expect(mine.status).toBe(409);
      expect((await api.call('GET', '/firmware/rollouts', { token: narrow })).body).toEqual([]);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
