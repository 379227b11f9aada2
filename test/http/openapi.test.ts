import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiDaemon, type ApiDaemon } from './api-harness.js';

describe('GET /openapi.json', () => {
  let api: ApiDaemon;

  beforeAll(async () => {
    api = await startApiDaemon();
  });
  afterAll(() => api.stop());

  it('is a valid OpenAPI 3 document (checked by an independent validator) describing contract section 6 at the issuer', async () => {
    const response = await fetch(`${api.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as Record<string, unknown>;
    const validated = (await SwaggerParser.validate(structuredClone(document) as never)) as unknown as {
      servers: Array<{ url: string }>;
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { required?: string[] } }> }; responses: Record<string, unknown> }>>;
    };
    expect(validated.servers).toEqual([{ url: api.baseUrl }]);
    const operations = Object.entries(validated.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations).toEqual(
      expect.arrayContaining([
        'POST /oauth2/token',
        'GET /.well-known/jwks.json',
        'GET /charge-points',
        'POST /charge-points/{chargePointId}/start',
        'POST /charge-points/{chargePointId}/stop',
        'GET /health',
        'GET /metrics',
        'GET /openapi.json',
      ]),
    );
    const start = validated.paths['/charge-points/{chargePointId}/start']!.post!;
    expect(start.requestBody!.content['application/json']!.schema.required).toEqual(['connectorId', 'idTag']);
    expect(Object.keys(start.responses).sort()).toEqual(['202', '400', '401', '403', '404', '409', '422', '502', '503', '504']);
  });
});
