import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { tempDirForTest } from '../support/for-test.js';
import { rawRequest, uploadHarnessForTest } from './upload-harness.js';

/** Contract 11.3 / 11.4: the HTTP upload locations, tried with what a station or an attacker could send. */

const LOG_ID = 'a1b2c3d4e5f6a7b8c9d0';
const BOUNDARY = 'chargegate-test-boundary';
const MULTIPART = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };
/** A form field a station adds before its file part. */
const FIELD = Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="note"\r\n\r\nfrom CP001\r\n`);
const FILE_HEADER = Buffer.from(
  `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="diag.zip"\r\n` +
    'content-type: application/zip\r\n\r\n',
);
const CLOSING = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

/** A request whose headers are sent at once and whose body only when `send` is called; `answer` is its status. */
function headersFirst(port: number, method: string, requestPath: string, headers: Record<string, string> = {}) {
  const request = http.request({ host: '127.0.0.1', port, method, path: requestPath, headers });
  const answer = new Promise<number | 'closed'>((resolve) => {
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', () => resolve('closed'));
  });
  request.flushHeaders();
  return { answer, send: (body: Buffer) => void request.end(body) };
}

/** Starts `count` uploads on one token; all but one must be answered 404 before any sends a byte of its body. */
async function concurrentUploads(count: number, start: () => ReturnType<typeof headersFirst>, body: Buffer) {
  const uploads = Array.from({ length: count }, start);
  let answered = 0;
  for (const upload of uploads) void upload.answer.then(() => answered++);
  await eventually(() => answered === count - 1, 5000, `${count - 1} of ${count} uploads on one token answered 404`);
  for (const upload of uploads) upload.send(body);
  return (await Promise.all(uploads.map((u) => u.answer))).sort();
}

describe('HTTP log uploads', () => {
  it('keeps a raw PUT under its name; the token is spent by it, a second use is 404 and writes nothing', async () => {
    const h = await uploadHarnessForTest();
    const grant = h.issue(LOG_ID);
    const put = await fetch(`${h.baseUrl}/uploads/${grant.http.token}/diag-2026.log`, {
      method: 'PUT',
      body: 'line 1\nline 2\n',
    });
    expect(put.status).toBe(201);
    expect(await put.json()).toEqual({ name: 'diag-2026.log', bytes: 14 });
    expect(readFileSync(path.join(h.dataDir, 'logs', LOG_ID, 'diag-2026.log'), 'utf8')).toBe('line 1\nline 2\n');
    expect(h.heard.map((e) => e.event)).toEqual(['receiving', 'arrived']);

    const again = await fetch(`${h.baseUrl}/uploads/${grant.http.token}/other.log`, { method: 'PUT', body: 'x' });
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ error: 'not_found', message: expect.stringMatching(/token/) });
    expect(h.onDisk()).toEqual([LOG_ID, `${LOG_ID}/diag-2026.log`]);
  });

  it('keeps the one file part of a multipart POST, named by its filename', async () => {
    const h = await uploadHarnessForTest();
    const grant = h.issue(LOG_ID);
    const form = new FormData();
    form.append('note', 'from the station');
    form.append('file', new Blob(['zipped diagnostics']), 'CP001-diagnostics.zip');
    const post = await fetch(`${h.baseUrl}/uploads/${grant.http.token}/`, { method: 'POST', body: form });
    expect(post.status).toBe(201);
    expect(readFileSync(path.join(h.dataDir, 'logs', LOG_ID, 'CP001-diagnostics.zip'), 'utf8')).toBe(
      'zipped diagnostics',
    );
  });

  it('takes one upload per token when many come at once (multipart POST or raw PUT): the others 404, no byte kept', async () => {
    const h = await uploadHarnessForTest();
    const posted = h.issue(LOG_ID);
    const multipart = Buffer.concat([FIELD, FILE_HEADER, Buffer.alloc(1000, 'm'), CLOSING]);
    const post = () => headersFirst(h.port, 'POST', `/uploads/${posted.http.token}/`, MULTIPART);
    expect(await concurrentUploads(5, post, multipart)).toEqual([201, 404, 404, 404, 404]);
    expect(h.onDisk()).toEqual([LOG_ID, `${LOG_ID}/diag.zip`]);

    const put = h.issue('b1b2c3d4e5f6a7b8c9d0');
    const raw = () => headersFirst(h.port, 'PUT', `/uploads/${put.http.token}/diag.log`);
    expect(await concurrentUploads(5, raw, Buffer.alloc(1000, 'r'))).toEqual([201, 404, 404, 404, 404]);
    expect(h.onDisk().filter((f) => f.startsWith('b1b2'))).toEqual([
      'b1b2c3d4e5f6a7b8c9d0',
      'b1b2c3d4e5f6a7b8c9d0/diag.log',
    ]);
    expect(h.files.list().map((f) => f.bytes)).toEqual([1000, 1000]);
  });

  it('cuts at its window end a multipart POST that stalls before its file part, or before its closing boundary', async () => {
    const h = await uploadHarnessForTest();
    const beforeFile = h.issue(LOG_ID, 1500);
    const afterFile = h.issue('b1b2c3d4e5f6a7b8c9d0', 1500);
    const started = performance.now();
    const stalled = [
      rawRequest(h.port, 'POST', `/uploads/${beforeFile.http.token}/`, {
        headers: MULTIPART,
        chunks: [FIELD],
        endBody: false,
      }),
      rawRequest(h.port, 'POST', `/uploads/${afterFile.http.token}/`, {
        headers: MULTIPART,
        chunks: [FILE_HEADER, Buffer.from('whole file'), Buffer.from(`\r\n--${BOUNDARY}\r\n`)],
        endBody: false,
      }),
    ];
    const bound = new Promise((resolve) => setTimeout(() => resolve('still open after 6 s'), 6000));
    expect(await Promise.race([Promise.all(stalled), bound])).toEqual([{ closed: true }, { closed: true }]);
    const cutAfterMs = performance.now() - started;
    expect(cutAfterMs).toBeGreaterThanOrEqual(1400);
    expect(cutAfterMs).toBeLessThan(5000);
    // Nothing of the first came; the second's file was whole before it stalled.
    expect(h.onDisk()).toEqual(['b1b2c3d4e5f6a7b8c9d0', 'b1b2c3d4e5f6a7b8c9d0/diag.zip']);
  });

  it("does not hold up the listener's close with a multipart POST stalled before its file part", async () => {
    const h = await uploadHarnessForTest();
    const grant = h.issue(LOG_ID);
    const stalled = rawRequest(h.port, 'POST', `/uploads/${grant.http.token}/`, {
      headers: MULTIPART,
      chunks: [FIELD],
      endBody: false,
    });
    await eventually(() => grant.receiving, 5000, 'the request holding its token');
    const started = performance.now();
    const bound = new Promise((resolve) => setTimeout(() => resolve('close still waiting after 5 s'), 5000));
    expect(await Promise.race([h.closeHttp().then(() => 'closed'), bound])).toBe('closed');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await stalled).toEqual({ closed: true });
    expect(h.onDisk()).toEqual([]);
  });

  it('answers a wrong or expired token 404 with the JSON error body and writes no byte', async () => {
    const h = await uploadHarnessForTest();
    const grant = h.issue(LOG_ID, 1000);
    const wrong = await fetch(`${h.baseUrl}/uploads/${'0'.repeat(32)}/x.log`, { method: 'PUT', body: 'x' });
    expect(wrong.status).toBe(404);
    expect(await wrong.json()).toMatchObject({ error: 'not_found' });
    h.clock.ms += 1000;
    const expired = await fetch(`${h.baseUrl}/uploads/${grant.http.token}/x.log`, { method: 'PUT', body: 'x' });
    expect(expired.status).toBe(404);
    expect(h.onDisk()).toEqual([]);
  });

  it('refuses an upload over logs.maxUploadBytes with 413, declared or found out while streaming, keeping nothing', async () => {
    const h = await uploadHarnessForTest(1000);
    const declared = h.issue(LOG_ID);
    const big = Buffer.alloc(1001, 'x');
    const first = await rawRequest(h.port, 'PUT', `/uploads/${declared.http.token}/big.log`, {
      headers: { 'content-length': big.length },
      chunks: [big],
    });
    expect(first).toMatchObject({ status: 413, body: { error: 'payload_too_large' } });
    expect(h.onDisk()).toEqual([]);

    // Chunked: the size shows only as the bytes come; the partial file is removed.
    const streamed = h.issue('b1b2c3d4e5f6a7b8c9d0');
    const second = await rawRequest(h.port, 'PUT', `/uploads/${streamed.http.token}/big.log`, {
      chunks: [Buffer.alloc(600, 'x'), Buffer.alloc(600, 'y')],
    });
    expect(second).toMatchObject({ status: 413 });
    expect(h.onDisk()).toEqual(['b1b2c3d4e5f6a7b8c9d0']);
    // Not spent: the station may try again with a smaller file.
    const retry = await fetch(`${h.baseUrl}/uploads/${streamed.http.token}/small.log`, { method: 'PUT', body: 'ok' });
    expect(retry.status).toBe(201);

    const multipart = h.issue('c1b2c3d4e5f6a7b8c9d0');
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(1500, 'z')]), 'big.zip');
    const third = await fetch(`${h.baseUrl}/uploads/${multipart.http.token}/`, { method: 'POST', body: form });
    expect(third.status).toBe(413);
    expect(h.onDisk().filter((f) => f.startsWith('c1b2'))).toEqual([]);

    // Multipart, chunked: found out inside the file part.
    const chunkedMultipart = h.issue('d1b2c3d4e5f6a7b8c9d0');
    const boundary = 'chargegate-test-boundary';
    const fourth = await rawRequest(h.port, 'POST', `/uploads/${chunkedMultipart.http.token}/`, {
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      chunks: [
        Buffer.from(
          `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.zip"\r\n` +
            'content-type: application/zip\r\n\r\n',
        ),
        Buffer.alloc(800, 'a'),
        Buffer.alloc(800, 'b'),
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ],
    });
    expect(fourth).toMatchObject({ status: 413 });
    expect(h.onDisk().filter((f) => f.startsWith('d1b2'))).toEqual(['d1b2c3d4e5f6a7b8c9d0']);
  });

  it('keeps every name a station or attacker sends inside the upload folder: .., %2e%2e, absolute, a filename', async () => {
    const h = await uploadHarnessForTest();
    const attempts = [
      ['d0', '/../../../escaped-1'],
      ['d1', '/%2e%2e/%2e%2e/escaped-2'],
      ['d2', '/..%2f..%2fescaped-3'],
      ['d3', '//etc/escaped-4'],
      ['d4', '/%2Fetc%2Fescaped-5'],
    ] as const;
    for (const [suffix, name] of attempts) {
      const grant = h.issue(`e1b2c3d4e5f6a7b8c9${suffix}`);
      const answer = await rawRequest(h.port, 'PUT', `/uploads/${grant.http.token}${name}`, {
        chunks: [Buffer.from('content')],
      });
      expect(answer, name).toMatchObject({ status: 201 });
    }
    const form = new FormData();
    form.append('file', new Blob(['x']), '../../../../tmp/escaped-6');
    const grant = h.issue('f1b2c3d4e5f6a7b8c9d0');
    expect((await fetch(`${h.baseUrl}/uploads/${grant.http.token}`, { method: 'POST', body: form })).status).toBe(201);
    // Each landed in its own folder under a plain name; nothing anywhere else.
    expect(h.onDisk().filter((f) => f.includes('/'))).toEqual([
      'e1b2c3d4e5f6a7b8c9d0/escaped-1',
      'e1b2c3d4e5f6a7b8c9d1/escaped-2',
      'e1b2c3d4e5f6a7b8c9d2/escaped-3',
      'e1b2c3d4e5f6a7b8c9d3/escaped-4',
      'e1b2c3d4e5f6a7b8c9d4/escaped-5',
      'f1b2c3d4e5f6a7b8c9d0/escaped-6',
    ]);
  });

  it('does not follow a symlink planted under the name being uploaded: the link is replaced, its target untouched', async () => {
    const h = await uploadHarnessForTest();
    const outside = path.join(tempDirForTest('outside'), 'precious');
    writeFileSync(outside, 'do not overwrite');
    const grant = h.issue(LOG_ID);
    mkdirSync(path.join(h.dataDir, 'logs', LOG_ID), { recursive: true });
    symlinkSync(outside, path.join(h.dataDir, 'logs', LOG_ID, 'diag.log'));
    const put = await fetch(`${h.baseUrl}/uploads/${grant.http.token}/diag.log`, { method: 'PUT', body: 'station' });
    expect(put.status).toBe(201);
    expect(readFileSync(outside, 'utf8')).toBe('do not overwrite');
    const kept = path.join(h.dataDir, 'logs', LOG_ID, 'diag.log');
    expect(lstatSync(kept).isFile()).toBe(true);
    expect(readFileSync(kept, 'utf8')).toBe('station');
  });

  it('cuts a stalled upload when its window ends, keeping nothing, while /health answers at once', async () => {
    const h = await uploadHarnessForTest();
    const grant = h.issue(LOG_ID, 1500);
    const started = performance.now();
    const stalled = rawRequest(h.port, 'PUT', `/uploads/${grant.http.token}/slow.log`, {
      headers: { 'content-length': 1000 },
      chunks: [Buffer.alloc(10, 's')],
      endBody: false,
    });
    const healthMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      expect((await fetch(`${h.baseUrl}/health`)).status).toBe(200);
      healthMs.push(performance.now() - t);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await stalled).toEqual({ closed: true });
    const cutAfterMs = performance.now() - started;
    expect(cutAfterMs).toBeGreaterThanOrEqual(1400);
    expect(cutAfterMs).toBeLessThan(5000);
    expect(Math.max(...healthMs)).toBeLessThan(1000);
    expect(h.onDisk()).toEqual([LOG_ID]);
    expect(h.heard.at(-1)).toMatchObject({ event: 'broken', detail: expect.stringMatching(/window/) });
  });

  it("does not hold up the listener's close: an upload under way is cut when the daemon stops", async () => {
    const h = await uploadHarnessForTest();
    const grant = h.issue(LOG_ID);
    const stalled = rawRequest(h.port, 'PUT', `/uploads/${grant.http.token}/slow.log`, {
      headers: { 'content-length': 1000 },
      chunks: [Buffer.alloc(10, 's')],
      endBody: false,
    });
    await eventually(() => h.heard.some((e) => e.event === 'receiving'), 5000, 'the upload started');
    const started = performance.now();
    await h.closeHttp();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await stalled).toEqual({ closed: true });
    expect(h.onDisk()).toEqual([LOG_ID]);
  });
});
