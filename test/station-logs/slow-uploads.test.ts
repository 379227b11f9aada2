import { Client } from 'basic-ftp';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { apiDaemonForTest } from '../http/api-harness.js';
import { MIN_PROBE_ROUNDS, STALL_BOUND_MS } from '../support/bystander-probe.js';
import { eventually } from '../support/eventually.js';
import { bystanderProbeForTest, stationV201ForTest } from '../support/for-test.js';
import { freePort } from '../support/free-port.js';
import { rawRequest } from './upload-harness.js';

/**
 * Contract 11.4: slow and abandoned uploads, over HTTP and FTP at once, are cut when their window ends and never delay
 * another station's Heartbeat, /health or the API by a second: measured from a probe in a process of its own.
 */

const WINDOW_S = 3;

describe('slow station log uploads', () => {
  it('are cut at logs.uploadWindowS while another station, /health and the API answer within 1 s', async () => {
    const passiveFrom = await freePort();
    const api = await apiDaemonForTest({
      sites: [
        {
          id: 's1',
          stations: [
            { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1] }] },
            { id: 'CP002', chargePoints: [{ id: 'CP002-A', connectors: [1] }] },
            { id: 'CP201', chargePoints: [{ id: 'CP201-A', connectors: [1] }] },
          ],
          meters: [],
          webhooks: [],
        },
      ],
      groups: [{ id: 'operators', scope: 'company:acme', permissions: ['stations:read', 'stations:operate'] }],
      logs: {
        uploadWindowS: WINDOW_S,
        ftp: { host: '127.0.0.1', port: 0, passivePorts: [passiveFrom, passiveFrom + 20] },
      },
    });
    const token = await api.token(api.createApp('operators'));
    const cp001 = await api.connect('CP001');
    await cp001.boot();
    const cp201 = await stationV201ForTest(api.url, 'CP201');
    await cp201.boot();

    // CP001 starts an HTTP upload and stalls; CP201 opens an FTP data connection and stalls.
    const stalled: Array<Promise<unknown>> = [];
    const ftp = new Client(WINDOW_S * 4000);
    cp001.handle('GetDiagnostics', (params) => {
      const url = new URL(`${(params as { location: string }).location}stalled.log`);
      stalled.push(
        rawRequest(Number(url.port), 'PUT', url.pathname, {
          headers: { 'content-length': 10_000_000 },
          chunks: [Buffer.alloc(1000, 'h')],
          endBody: false,
        }),
      );
      return { fileName: 'stalled.log' };
    });
    const trickle = new PassThrough();
    trickle.write('the first bytes, then nothing');
    cp201.handle('GetLog', (params) => {
      const url = new URL(params.log.remoteLocation);
      stalled.push(
        ftp
          .access({ host: url.hostname, port: Number(url.port), user: url.username, password: url.password })
          .then(() => ftp.uploadFrom(trickle, 'stalled.log'))
          .then(
            () => 'completed',
            () => 'cut',
          ),
      );
      return { status: 'Accepted', filename: 'stalled.log' };
    });

    const bystander = await bystanderProbeForTest({
      httpPort: Number(new URL(api.baseUrl).port),
      ocppUrl: api.url,
      identity: 'CP002',
    });
    const started = performance.now();
    const http = await api.call('POST', '/stations/CP001/logs', { token, body: { via: 'http' } });
    const overFtp = await api.call('POST', '/stations/CP201/logs', { token, body: { via: 'ftp' } });
    expect([http.status, overFtp.status]).toEqual([202, 202]);
    const apiMs: number[] = [];
    while (performance.now() - started < WINDOW_S * 1000 + 500) {
      const t = performance.now();
      expect((await api.call('GET', '/stations', { token })).status).toBe(200);
      apiMs.push(performance.now() - t);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const results = await Promise.all(stalled);
    const { slowestHealthMs, slowestHeartbeatMs, samples } = await bystander.stop();
    trickle.destroy();
    ftp.close();

    expect(results).toEqual([{ closed: true }, 'cut']);
    expect(performance.now() - started).toBeLessThan(WINDOW_S * 1000 + 5000);
    expect(samples).toBeGreaterThanOrEqual(MIN_PROBE_ROUNDS);
    expect(slowestHeartbeatMs).toBeLessThan(STALL_BOUND_MS);
    expect(slowestHealthMs).toBeLessThan(STALL_BOUND_MS);
    expect(Math.max(...apiMs)).toBeLessThan(STALL_BOUND_MS);
    for (const [stationId, body] of [
      ['CP001', http.body],
      ['CP201', overFtp.body],
    ] as const) {
      const logId = (body as unknown as { logId: string }).logId;
      const record = await eventually(
        async () => {
          const { body: r } = await api.call('GET', `/stations/${stationId}/logs/${logId}`, { token });
          return r.state === 'failed' && r;
        },
        10_000,
        `${stationId}'s collection failed`,
      );
      expect(record).toMatchObject({
        reason: `the upload did not end within logs.uploadWindowS (${WINDOW_S} s)`,
        file: null,
      });
    }
  });
});
