import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { addImage, findImage, firmwareDir } from '../../src/firmware/index.js';
import { registerFirmwareFiles } from '../../src/http/firmware-files.js';
import { apiDaemonForTest, type ApiDaemon } from '../http/api-harness.js';
import { eventually, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { updatesFirmware16 } from '../support/firmware-station.js';
import { movableDateForTest, tempDirForTest } from '../support/for-test.js';

/**
 * Contract 11.2 and 11.4: GET and HEAD /firmware/{token}/{file} on the HTTP listener of an in-process daemon, the
 * token minted by a real rollout to a real ocpp-rpc station: ranges, 404 for everything else without touching the
 * disk, tokens that end an hour after the update, and a stalled reader that delays nobody.
 */

const SITES = [
  {
    id: 's1',
    stations: ['CP001', 'CP002'].map((id) => ({ id, chargePoints: [{ id: `${id}-A`, connectors: [1] }] })),
    meters: [],
    webhooks: [],
  },
];
const GROUPS = [{ id: 'operators', scope: 'company:acme', permissions: ['stations:read', 'stations:operate'] }];
/** Large enough that a reader that stops reading leaves the server's socket buffers full. */
const IMAGE = randomBytes(8 * 1024 * 1024);
const SHA256 = createHash('sha256').update(IMAGE).digest('hex');

interface Served {
  api: ApiDaemon;
  /** The location the station was sent: http://127.0.0.1:port/firmware/{token}/fw-2.0.bin */
  location: string;
  token: string;
  imageId: string;
  sendStatus(status: string): Promise<unknown>;
}

/** A daemon, an image, and a rollout to CP001, which answers UpdateFirmware and fetches nothing by itself. */
async function served(): Promise<Served> {
  const api = await apiDaemonForTest({ sites: SITES, groups: GROUPS });
  const file = path.join(tempDirForTest('image'), 'fw-2.0.bin');
  writeFileSync(file, IMAGE);
  const { imageId } = await addImage(api.db, api.temp.dataDir, { maxImageBytes: 1e9, maxTotalBytes: 2e9 }, { file });
  const station = await api.connect('CP001');
  const updates = updatesFirmware16(station, { newVersion: '2.0', silent: true });
  await station.boot({ firmwareVersion: '1.0' });
  const token = await api.token(api.createApp('operators'));
  await api.call('POST', '/firmware/rollouts', { token, body: { imageId, stationIds: ['CP001'] } });
  await eventually(() => updates.received.length === 1);
  const location = updates.received[0]!.location as string;
  return {
    api,
    location,
    token: /\/firmware\/([0-9a-f]{32})\//.exec(location)![1]!,
    imageId,
    sendStatus: (status) => station.call('FirmwareStatusNotification', { status }),
  };
}

/** A request with the path sent exactly as written (fetch would resolve `..` before sending it). */
function raw(
  api: ApiDaemon,
  method: string,
  rawPath: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${api.baseUrl}${rawPath}`, { method, path: rawPath }, (response) => {
      let body = '';
      response.setEncoding('latin1').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject).end();
  });
}

describe('firmware downloads', () => {
  it(
    'serves the image whole, by a single range, and its headers by HEAD; a range past the end is 416',
    async () => {
      const { api, location } = await served();
      const whole = await fetch(location);
      expect(whole.status).toBe(200);
      expect(Object.fromEntries(whole.headers)).toMatchObject({
        'accept-ranges': 'bytes',
        etag: `"${SHA256}"`,
        'content-length': String(IMAGE.length),
        'content-type': 'application/octet-stream',
      });
      expect(Buffer.from(await whole.arrayBuffer()).equals(IMAGE)).toBe(true);

      const head = await fetch(location, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(IMAGE.length));
      expect(await head.text()).toBe('');

      const part = await fetch(location, { headers: { range: 'bytes=100-199' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 100-199/${IMAGE.length}`);
      expect(part.headers.get('content-length')).toBe('100');
      expect(Buffer.from(await part.arrayBuffer())).toEqual(IMAGE.subarray(100, 200));

      const tail = await fetch(location, { headers: { range: 'bytes=-10' } });
      expect(tail.status).toBe(206);
      expect(Buffer.from(await tail.arrayBuffer())).toEqual(IMAGE.subarray(IMAGE.length - 10));

      const headPart = await fetch(location, { method: 'HEAD', headers: { range: `bytes=${IMAGE.length - 5}-` } });
      expect(headPart.status).toBe(206);
      expect(headPart.headers.get('content-length')).toBe('5');

      // A resume against another version of the file (If-Range not its ETag) gets the whole image.
      const stale = await fetch(location, { headers: { range: 'bytes=100-199', 'if-range': '"other"' } });
      expect(stale.status).toBe(200);
      expect(stale.headers.get('content-length')).toBe(String(IMAGE.length));
      await stale.body?.cancel();

      const past = await fetch(location, { headers: { range: `bytes=${IMAGE.length}-` } });
      expect(past.status).toBe(416);
      expect(past.headers.get('content-range')).toBe(`bytes */${IMAGE.length}`);
      expect(await past.json()).toMatchObject({ error: 'range_not_satisfiable' });
      expect(api.logged('api request refused').length).toBeGreaterThan(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'answers 404 with the JSON error body to any other path, token or name, and opens no file for it',
    async () => {
      const { api, token, imageId } = await served();
      const before = readdirSync(firmwareDir(api.temp.dataDir));
      const other = 'f'.repeat(32);
      for (const [method, wrong] of [
        ['GET', `/firmware/${other}/fw-2.0.bin`],
        ['HEAD', `/firmware/${other}/fw-2.0.bin`],
        ['GET', `/firmware/${token.toUpperCase()}/fw-2.0.bin`],
        ['GET', `/firmware/${token}/other.bin`],
        ['GET', `/firmware/${token}/${imageId}`],
        ['GET', `/firmware/${token}/..`],
        ['GET', `/firmware/${token}/%2e%2e`],
        ['GET', `/firmware/${token}/%2e%2e%2f%2e%2e%2fchargegate.db`],
        ['GET', `/firmware/${token}/../../chargegate.db`],
        ['GET', `/firmware/../chargegate.db`],
        ['GET', `/firmware/${token}//etc/passwd`],
        ['GET', `/firmware/${token}/%2fetc%2fpasswd`],
        ['GET', `/firmware/${token}`],
        ['GET', `/firmware/`],
        ['GET', `/firmware`],
        ['POST', `/firmware/${token}/fw-2.0.bin`],
      ] as const) {
        const answer = await raw(api, method, wrong);
        expect({ method, wrong, status: answer.status }).toEqual({ method, wrong, status: 404 });
        if (method !== 'HEAD') expect(JSON.parse(answer.body)).toMatchObject({ error: 'not_found' });
      }
      expect(readdirSync(firmwareDir(api.temp.dataDir))).toEqual(before);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'refuses a symlink placed in dataDir/firmware instead of the image (404), even one to a file of its size',
    async () => {
      const { api, location, imageId } = await served();
      const outside = path.join(tempDirForTest('outside'), 'secret');
      writeFileSync(outside, Buffer.alloc(IMAGE.length, 1));
      const stored = path.join(firmwareDir(api.temp.dataDir), imageId);
      rmSync(stored);
      symlinkSync(outside, stored);
      const answer = await fetch(location);
      expect(answer.status).toBe(404);
      expect(await answer.json()).toMatchObject({ error: 'not_found' });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "keeps the token until the station's update ended plus an hour, then 404 (the clock moved)",
    async () => {
      movableDateForTest();
      const { location, sendStatus } = await served();
      await sendStatus('DownloadFailed');
      vi.setSystemTime(Date.now() + 3_600_000 - 60_000);
      const withinHour = await fetch(location, { method: 'HEAD' });
      expect(withinHour.status).toBe(200);
      vi.setSystemTime(Date.now() + 120_000);
      expect((await fetch(location, { method: 'HEAD' })).status).toBe(404);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "a reader that stalls mid-download delays neither /health, another station's Heartbeat nor another download (< 1 s)",
    async () => {
      const { api, location } = await served();
      const url = new URL(location);
      const stalled = connect(Number(url.port), url.hostname);
      let received = 0;
      stalled.on('data', (chunk: Buffer) => {
        received += chunk.length;
        // Reads a first piece, then stops reading: the server's writes back up into its socket buffers.
        if (received > 100_000) stalled.pause();
      });
      stalled.write(`GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n\r\n`);
      await eventually(() => stalled.isPaused());
      const bystander = await api.connect('CP002');
      await bystander.boot();

      const timed = async (what: () => Promise<unknown>): Promise<number> => {
        const start = performance.now();
        await what();
        return performance.now() - start;
      };
      expect(await timed(async () => expect((await fetch(`${api.baseUrl}/health`)).status).toBe(200))).toBeLessThan(
        1000,
      );
      expect(await timed(() => bystander.heartbeat())).toBeLessThan(1000);
      const part = await fetch(location, { headers: { range: 'bytes=0-65535' } });
      expect(Buffer.from(await part.arrayBuffer())).toEqual(IMAGE.subarray(0, 65_536));
      expect(received).toBeLessThan(IMAGE.length);
      stalled.destroy();
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
  it(
    'a reader that takes a few bytes now and then, never idle, is cut at the response deadline',
    async () => {
      const { api, token, imageId } = await served();
      // The route as the daemon registers it, with bounds short enough for a test: 1 s for this image.
      const app = Fastify();
      onTestFinished(() => app.close());
      await registerFirmwareFiles(app, {
        dataDir: api.temp.dataDir,
        download: (t) => (t === token ? findImage(api.db, imageId) : undefined),
        bounds: { idleTimeoutMs: 60_000, floorMs: 1_000, minBytesPerS: 1e9 },
      });
      // The server's side of the connection closing is the cut; the reader then drains what the socket buffers hold
      // at once instead of at its trickle (seconds of it: several MB on loopback).
      let cut = false;
      app.server.on('connection', (socket: Socket) => socket.once('close', () => (cut = true)));
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      const trickling = connect(port, '127.0.0.1');
      let received = 0;
      let closed = false;
      trickling.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (cut) return;
        // A bit at a time: the server's writes keep moving, so the idle timeout never fires.
        trickling.pause();
        setTimeout(() => trickling.resume(), 100).unref();
      });
      trickling.on('close', () => (closed = true));
      trickling.on('error', () => undefined);
      trickling.write(`GET /firmware/${token}/fw-2.0.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await eventually(() => cut, 30_000, 'the server cutting the trickling download');
      trickling.resume();
      await eventually(() => closed, 30_000, 'the reader seeing the cut');
      expect(received).toBeGreaterThan(0);
      expect(received).toBeLessThan(IMAGE.length);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
