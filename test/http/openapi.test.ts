import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiDaemon, type ApiDaemon } from './api-harness.js';

interface DocumentedResponse {
  content?: Record<string, { schema: { required?: string[]; properties?: Record<string, { enum?: string[] }> } }>;
}

interface ValidatedDocument {
  servers: Array<{ url: string }>;
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content: Record<string, { schema: { required?: string[] } }> };
        responses: Record<string, DocumentedResponse>;
      }
    >
  >;
}

describe('GET /openapi.json', () => {
  let api: ApiDaemon;
  let validated: ValidatedDocument;

  beforeAll(async () => {
    api = await startApiDaemon();
    const response = await fetch(`${api.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    // validate() also resolves every $ref, so each response below carries its schema inline.
    validated = (await SwaggerParser.validate((await response.json()) as never)) as unknown as ValidatedDocument;
  });
  afterAll(() => api.stop());

  it('is a valid OpenAPI 3 document (checked by an independent validator) describing contract section 6 at the issuer', () => {
    expect(validated.servers).toEqual([{ url: api.baseUrl }]);
    const operations = Object.entries(validated.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'POST /oauth2/token',
        'GET /.well-known/jwks.json',
        'GET /charge-points',
        'GET /sites/{siteId}/circuits',
        'POST /charge-points/{chargePointId}/start',
        'POST /charge-points/{chargePointId}/stop',
        'GET /sites/{siteId}/circuits/{circuitId}/limit',
        'PUT /sites/{siteId}/circuits/{circuitId}/limit',
        'DELETE /sites/{siteId}/circuits/{circuitId}/limit',
        'GET /health',
        'GET /metrics',
        'GET /openapi.json',
        'POST /stations/{id}/logs',
        'GET /stations/{id}/logs/{logId}',
        'GET /stations/{id}/logs/{logId}/file',
        'PUT /uploads/{token}/{name}',
        'POST /uploads/{token}/{name}',
      ]),
    );
    const start = validated.paths['/charge-points/{chargePointId}/start']!.post!;
    expect(start.requestBody!.content['application/json']!.schema.required).toEqual(['connectorId', 'idTag']);
    expect(Object.keys(start.responses).sort()).toEqual([
      '202',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '415',
      '422',
      '502',
      '503',
      '504',
      'default',
    ]);
  });

  it('describes the errors the API and the token endpoint actually send: status listed, body shape and error code documented', async () => {
    const token = await api.token(api.createApp('ops'));
    const start = (init: RequestInit) =>
      fetch(`${api.baseUrl}/charge-points/CP001-A/start`, { method: 'POST', ...init });
    const json = { 'content-type': 'application/json' };
    const bearer = { authorization: `Bearer ${token}` };
    const valid = JSON.stringify({ connectorId: 1, idTag: 'TAG' });
    const tokenRequest = (body: string) =>
      fetch(`${api.baseUrl}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });

    const cases: Array<[path: string, method: string, send: () => Promise<Response>, status: number, error: string]> = [
      ['/charge-points', 'get', () => fetch(`${api.baseUrl}/charge-points`), 401, 'unauthorized'],
      [
        '/uploads/{token}/{name}',
        'put',
        () => fetch(`${api.baseUrl}/uploads/${'0'.repeat(32)}/diag.log`, { method: 'PUT', body: 'x' }),
        404,
        'not_found',
      ],
      [
        '/sites/{siteId}/circuits',
        'get',
        () => fetch(`${api.baseUrl}/sites/nope/circuits`, { headers: bearer }),
        404,
        'not_found',
      ],
      [
        '/charge-points/{chargePointId}/start',
        'post',
        () => start({ headers: json, body: valid }),
        401,
        'unauthorized',
      ],
      [
        '/charge-points/{chargePointId}/start',
        'post',
        () => start({ headers: { ...json, ...bearer }, body: '{"connectorId":' }),
        400,
        'invalid_request',
      ],
      [
        '/charge-points/{chargePointId}/start',
        'post',
        () => start({ headers: { ...json, ...bearer }, body: JSON.stringify({ connectorId: 'one' }) }),
        400,
        'invalid_request',
      ],
      [
        '/charge-points/{chargePointId}/start',
        'post',
        () => start({ headers: { 'content-type': 'application/xml', ...bearer }, body: '<start/>' }),
        415,
        'unsupported_media_type',
      ],
      [
        '/charge-points/{chargePointId}/start',
        'post',
        () =>
          start({
            headers: { ...json, ...bearer },
            body: JSON.stringify({ connectorId: 1, idTag: 'x'.repeat(70_000) }),
          }),
        413,
        'payload_too_large',
      ],
      [
        '/charge-points/{chargePointId}/start',
        'post',
        () =>
          fetch(`${api.baseUrl}/charge-points/NOPE/start`, {
            method: 'POST',
            headers: { ...json, ...bearer },
            body: valid,
          }),
        404,
        'not_found',
      ],
      [
        '/charge-points/{chargePointId}/start',
        'post',
        () => start({ headers: { ...json, ...bearer }, body: valid }),
        503,
        'station_offline',
      ],
      [
        '/sites/{siteId}/circuits/{circuitId}/limit',
        'put',
        () => fetch(`${api.baseUrl}/sites/s1/circuits/main/limit`, { method: 'PUT', headers: json, body: '{}' }),
        401,
        'unauthorized',
      ],
      [
        '/sites/{siteId}/circuits/{circuitId}/limit',
        'put',
        () =>
          fetch(`${api.baseUrl}/sites/s1/circuits/nope/limit`, {
            method: 'PUT',
            headers: { ...json, ...bearer },
            body: JSON.stringify({ maxCurrentA: 16, until: '2999-01-01T00:00:00Z' }),
          }),
        404,
        'not_found',
      ],
      [
        '/sites/{siteId}/circuits/{circuitId}/limit',
        'delete',
        () => fetch(`${api.baseUrl}/sites/s1/circuits/nope/limit`, { method: 'DELETE', headers: bearer }),
        404,
        'not_found',
      ],
      ['/oauth2/token', 'post', () => tokenRequest('grant_type=password'), 400, 'unsupported_grant_type'],
      [
        '/oauth2/token',
        'post',
        () => tokenRequest(`grant_type=client_credentials&padding=${'a'.repeat(70_000)}`),
        400,
        'invalid_request',
      ],
      [
        '/oauth2/token',
        'post',
        () => tokenRequest('grant_type=client_credentials&client_id=nobody&client_secret=guess'),
        401,
        'invalid_client',
      ],
    ];
    for (const [path, method, send, status, error] of cases) {
      const what = `${method.toUpperCase()} ${path} ${status} ${error}`;
      const response = await send();
      expect(response.status, what).toBe(status);
      const body = (await response.json()) as Record<string, unknown>;
      const documented =
        validated.paths[path]![method]!.responses[String(status)]?.content?.['application/json']?.schema;
      expect(documented, `${what}: status documented`).toBeDefined();
      expect(documented!.properties!.error!.enum, `${what}: code documented`).toContain(error);
      expect(body.error, what).toBe(error);
      for (const field of documented!.required!) expect(body, `${what}: ${field}`).toHaveProperty(field);
    }
  });
});
