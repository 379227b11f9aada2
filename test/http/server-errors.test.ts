import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/http/index.js';
import { capturedLogger } from '../support/captured-log.js';

/**
 * The listener's one error path, seen from a client: a part's route that fails, and requests Fastify refuses to read.
 */
describe('HTTP listener errors', () => {
  let app: FastifyInstance;
  let baseUrl: string;
  const { logger, lines: logs } = capturedLogger();

  beforeAll(async () => {
    const routes = async (part: FastifyInstance) => {
      part.post('/echo', async (request) => ({ received: request.body }));
      part.get('/broken', async () => {
        throw new Error('database file /secret/path is locked');
      });
    };
    app = await createHttpServer({
      logger,
      routes: [routes],
      health: () => [],
      metrics: new Registry(),
      statusGuard: async () => undefined,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(() => app.close());

  const post = (path: string, body: string, contentType: string) =>
    fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
  const refusals = () => logs.filter((l) => l.msg === 'api request refused');

  it('answers a failing route with 500 server_error, no internals, and logs the error', async () => {
    const response = await fetch(`${baseUrl}/broken`);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: 'server_error', message: 'internal error' });
    const failed = logs.filter((l) => l.msg === 'api request failed');
    expect(failed).toEqual([
      expect.objectContaining({
        level: 50,
        url: '/broken',
        err: expect.objectContaining({ message: 'database file /secret/path is locked' }),
      }),
    ]);
  });

  it("maps Fastify's refusals to the documented codes with their HTTP status, never Fastify's internal codes, and logs each", async () => {
    const cases: Array<[string, () => Promise<Response>, number, string]> = [
      ['invalid JSON', () => post('/echo', '{"connectorId":', 'application/json'), 400, 'invalid_request'],
      ['empty JSON', () => post('/echo', '', 'application/json'), 400, 'invalid_request'],
      [
        'prototype poisoning',
        () => post('/echo', '{"__proto__":{"admin":true}}', 'application/json'),
        400,
        'invalid_request',
      ],
      ['unsupported media type', () => post('/echo', '<start/>', 'application/xml'), 415, 'unsupported_media_type'],
      [
        'body too large',
        () => post('/echo', JSON.stringify({ pad: 'x'.repeat(70_000) }), 'application/json'),
        413,
        'payload_too_large',
      ],
      ['unknown route', () => fetch(`${baseUrl}/nowhere?x=1`), 404, 'not_found'],
      ['undecodable URL', () => fetch(`${baseUrl}/%E0%A4%A`), 400, 'invalid_request'],
    ];
    const before = refusals().length;
    for (const [what, send, status, error] of cases) {
      const response = await send();
      expect(response.status, what).toBe(status);
      expect(response.headers.get('content-type'), what).toMatch(/^application\/json/);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body, what).toEqual({ error, message: expect.any(String) });
      expect(JSON.stringify(body), what).not.toMatch(/fst_/i);
    }
    expect(
      refusals()
        .slice(before)
        .map((l) => [l.status, l.error]),
    ).toEqual(cases.map(([, , status, error]) => [status, error]));
    expect(await post('/echo', '{"ok":true}', 'application/json').then((r): Promise<unknown> => r.json())).toEqual({
      received: { ok: true },
    });
  });
});
