import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiDaemon, type ApiDaemon } from '../http/api-harness.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import type { SimulatedStation } from '../support/station.js';
import { StationV201 } from '../support/station-v201.js';
import { uploadsDiagnostics16, uploadsLog201 } from './uploading-station.js';

/**
 * Contract 11.3 end to end in one daemon: real ocpp-rpc stations (1.6 and 2.0.1) asked for their logs through the
 * API, answering GetDiagnostics / GetLog by uploading for real over HTTP PUT, multipart POST and FTP.
 */

const SITES = [
  {
    id: 's1',
    stations: [
      { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1] }] },
      { id: 'CP201', chargePoints: [{ id: 'CP201-A', connectors: [1] }] },
    ],
    meters: [],
    webhooks: [],
  },
];
const GROUPS = [
  { id: 'operators', scope: 'company:acme', permissions: ['stations:read', 'stations:operate'] },
  { id: 'readers', scope: 'company:acme', permissions: ['stations:read'] },
];

interface LogDocument {
  logId: string;
  state: string;
  via: string;
  reason: string | null;
  file: { name: string; bytes: number; removed: string | null } | null;
}

describe('station logs collected by the gateway', () => {
  let api: ApiDaemon;
  let cp001: SimulatedStation;
  let cp201: StationV201;
  let token: string;

  beforeAll(async () => {
    const passiveFrom = await freePort();
    api = await startApiDaemon({
      ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0, callTimeoutMs: 2000 },
      sites: SITES,
      groups: GROUPS,
      logs: { ftp: { host: '127.0.0.1', port: 0, passivePorts: [passiveFrom, passiveFrom + 20] } },
    });
    cp001 = await api.connect('CP001');
    await cp001.boot();
    cp201 = await StationV201.connect(api.url, 'CP201');
    await cp201.boot();
    token = await api.token(api.createApp('operators'));
  });
  afterAll(async () => {
    await cp201.close().catch(() => undefined);
    await api.stop();
  });

  const ask = (stationId: string, body: object = {}) =>
    api.call('POST', `/stations/${stationId}/logs`, { token, body });
  const read = async (stationId: string, logId: string) =>
    (await api.call('GET', `/stations/${stationId}/logs/${logId}`, { token })).body as unknown as LogDocument;
  const settled = (stationId: string, logId: string) =>
    eventually(
      async () => {
        const record = await read(stationId, logId);
        return ['uploaded', 'failed'].includes(record.state) && record;
      },
      15_000,
      `log ${logId} uploaded or failed`,
    );
  const download = async (stationId: string, logId: string) => {
    const response = await fetch(`${api.baseUrl}/stations/${stationId}/logs/${logId}/file`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return { status: response.status, text: await response.text() };
  };

  it('collects a 1.6 station diagnostics over FTP (the default for 1.6 with logs.ftp), shown in the inventory', async () => {
    let release: () => void = () => undefined;
    const station = uploadsDiagnostics16(cp001, {
      fileName: 'CP001-diag.tar.gz',
      content: Buffer.from('1.6 diagnostics over FTP'),
      beforeFinal: new Promise<void>((resolve) => (release = resolve)),
    });
    const asked = await ask('CP001', { since: '2026-11-01T00:00:00Z' });
    expect(asked.status).toBe(202);
    const { logId } = asked.body as unknown as { logId: string };
    const sent = cp001.received.find((r) => r.action === 'GetDiagnostics')!.params as Record<string, string>;
    expect(sent.location).toMatch(/^ftp:\/\/log[0-9a-f]+:[0-9a-f]{32}@127\.0\.0\.1:\d+\/$/);
    expect(sent.startTime).toBe('2026-11-01T00:00:00Z');

    // The file is here; the station has not said Uploaded yet.
    await eventually(async () => (await read('CP001', logId)).state === 'received', 10_000, 'file received');
    const inventory = await api.call('GET', '/stations/CP001', { token });
    expect(inventory.body.operation).toEqual({ kind: 'logs', id: logId, state: 'received' });
    release();
    await station.done;
    expect(await settled('CP001', logId)).toMatchObject({
      state: 'uploaded',
      via: 'ftp',
      file: { name: 'CP001-diag.tar.gz', bytes: 24, removed: null },
    });
    expect(await download('CP001', logId)).toEqual({ status: 200, text: '1.6 diagnostics over FTP' });
    expect((await api.call('GET', '/stations/CP001', { token })).body.operation).toBeNull();
    // The audit keeps the request, never the location's password.
    const audit = (await api.call('GET', '/stations/CP001', { token })).body.operations as Array<{
      action: string;
      request: { location: string };
    }>;
    expect(audit[0]).toMatchObject({ action: 'GetDiagnostics', request: { location: '(hidden)' } });
  });

  it('collects a 1.6 station diagnostics over HTTP PUT when asked via http', async () => {
    const station = uploadsDiagnostics16(cp001, { fileName: 'diag.log', content: Buffer.from('over HTTP PUT') });
    const asked = await ask('CP001', { via: 'http' });
    const { logId } = asked.body as unknown as { logId: string };
    await station.done;
    expect(await settled('CP001', logId)).toMatchObject({ state: 'uploaded', via: 'http' });
    expect(await download('CP001', logId)).toEqual({ status: 200, text: 'over HTTP PUT' });
  });

  it('collects a 2.0.1 station log over a multipart POST (HTTP, the default for 2.0.1) and over FTP', async () => {
    const multipart = uploadsLog201(cp201, {
      fileName: 'CP201.log',
      content: Buffer.from('2.0.1 log, multipart'),
      how: 'multipart',
    });
    const first = await ask('CP201', { since: '2026-11-20T00:00:00Z' });
    expect(first.status).toBe(202);
    const firstId = (first.body as unknown as { logId: string }).logId;
    await multipart.done;
    expect(await settled('CP201', firstId)).toMatchObject({ state: 'uploaded', via: 'http' });
    expect(await download('CP201', firstId)).toEqual({ status: 200, text: '2.0.1 log, multipart' });

    const overFtp = uploadsLog201(cp201, { fileName: 'CP201-ftp.log', content: Buffer.from('2.0.1 log, FTP') });
    const second = await ask('CP201', { via: 'ftp' });
    const secondId = (second.body as unknown as { logId: string }).logId;
    await overFtp.done;
    expect(await settled('CP201', secondId)).toMatchObject({ state: 'uploaded', via: 'ftp' });
    expect(await download('CP201', secondId)).toEqual({ status: 200, text: '2.0.1 log, FTP' });
  });

  it('fails a collection whose station says Uploaded when nothing arrived, or says it failed', async () => {
    const claims = uploadsDiagnostics16(cp001, { fileName: 'none.log', content: Buffer.from(''), skipUpload: true });
    const claimed = (await ask('CP001', { via: 'http' })).body as unknown as { logId: string };
    await claims.done;
    expect(await settled('CP001', claimed.logId)).toMatchObject({
      state: 'failed',
      reason: 'the station said Uploaded, but no file arrived',
      file: null,
    });

    const fails = uploadsLog201(cp201, {
      fileName: 'x.log',
      content: Buffer.from('x'),
      skipUpload: true,
      finalStatus: 'UploadFailure',
    });
    const failed = (await ask('CP201')).body as unknown as { logId: string };
    await fails.done;
    expect(await settled('CP201', failed.logId)).toMatchObject({
      state: 'failed',
      reason: 'the station said UploadFailure',
    });
  });

  it('lets notifications nobody asked for change nothing', async () => {
    const rows = () => api.db.prepare('SELECT id, state, updated_at FROM station_logs ORDER BY id').all();
    const before = rows();
    await cp001.call('DiagnosticsStatusNotification', { status: 'Uploaded' });
    await cp001.call('DiagnosticsStatusNotification', { status: 'UploadFailed' });
    await cp201.call('LogStatusNotification', { status: 'Uploaded', requestId: 12345 });
    await cp201.call('LogStatusNotification', { status: 'UploadFailure' });
    expect(rows()).toEqual(before);
    expect(api.logged('log status notification nobody asked for: changes nothing')).toHaveLength(4);
  });

  it('answers a station that refuses 409 and records the collection failed', async () => {
    cp201.handle('GetLog', () => ({ status: 'Rejected', statusInfo: { reasonCode: 'Busy' } }));
    const refused = await ask('CP201');
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'station_refused', action: 'GetLog', status: 'Rejected' });
    const record = await read('CP201', (refused.body as unknown as { logId: string }).logId);
    expect(record).toMatchObject({ state: 'failed', reason: 'the station refused GetLog: Rejected' });
  });

  it('refuses via ftp-less bad input and a second collection on a busy station', async () => {
    expect((await ask('CP001', { via: 'smtp' })).status).toBe(400);
    expect((await ask('CP001', { since: 'yesterday' })).status).toBe(400);
    const reader = await api.token(api.createApp('readers'));
    expect((await api.call('POST', '/stations/CP001/logs', { token: reader, body: {} })).status).toBe(403);
    expect((await api.call('GET', '/stations/CP001/logs/nosuchlog', { token })).status).toBe(404);

    const silent = uploadsDiagnostics16(cp001, {
      fileName: 'slow.log',
      content: Buffer.from('x'),
      skipUpload: true,
      finalStatus: 'none',
    });
    const first = await ask('CP001', { via: 'http' });
    expect(first.status).toBe(202);
    await silent.done;
    const second = await ask('CP001', { via: 'http' });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ error: 'logs_in_progress' });
  });
});
