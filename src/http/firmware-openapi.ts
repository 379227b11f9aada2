import './firmware-schemas.js';
import type { OpenApiWords } from './stations-openapi.js';

/** The firmware rollouts' paths (contract 11.2) for GET /openapi.json; the schemas come from firmware-schemas.ts. */
export function firmwarePaths({ ref, json, error, bearerErrors }: OpenApiWords): Record<string, unknown> {
  const read = [{ bearer: [] }, { oauth2: ['stations:read'] }];
  const operate = [{ bearer: [] }, { oauth2: ['stations:operate'] }];
  const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
  const notFound = error("No such rollout, or one with a station the application's groups do not reach");
  return {
    '/firmware/{token}/{file}': {
      get: {
        operationId: 'downloadFirmware',
        summary:
          "A station's firmware download (the location its UpdateFirmware named): Range and HEAD supported, ETag = the image's SHA-256",
        security: [],
        parameters: [
          { name: 'token', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'file', in: 'path', required: true, schema: { type: 'string' } },
        ],
        responses: {
          '200': { description: 'The image', content: { 'application/octet-stream': {} } },
          '206': { description: 'The range asked for', content: { 'application/octet-stream': {} } },
          '404': error('A wrong or expired token (its update ended more than an hour ago), or another file name'),
          '416': error('The range starts past the end of the image'),
        },
      },
    },
    '/firmware/rollouts': {
      get: {
        operationId: 'listFirmwareRollouts',
        summary: 'The newest 20 rollouts whose stations the application reaches, each with its stations',
        security: read,
        responses: {
          '200': json({ type: 'array', items: ref('FirmwareRollout') }, 'Rollouts, newest first'),
          ...bearerErrors,
          '403': error('The application lacks stations:read'),
        },
      },
      post: {
        operationId: 'startFirmwareRollout',
        summary:
          'Rolls a stored image out to stations: at most `parallel` at once, charging stations after their transactions end (unless force)',
        security: operate,
        requestBody: { required: true, content: { 'application/json': { schema: ref('FirmwareRolloutRequest') } } },
        responses: {
          '201': json(ref('FirmwareRollout'), 'Started: stations are sent as they may go'),
          '400': error('Invalid body; an unknown image, station or site'),
          ...bearerErrors,
          '403': error('The application lacks stations:operate'),
          '404': error("A station the application's groups do not reach"),
          '409': error('`conflict`: a station is in another rollout not finished yet'),
        },
      },
    },
    '/firmware/rollouts/{id}': {
      get: {
        operationId: 'getFirmwareRollout',
        summary: 'A rollout and each of its stations',
        security: read,
        parameters: [idParameter],
        responses: {
          '200': json(ref('FirmwareRollout'), 'The rollout'),
          ...bearerErrors,
          '403': error('The application lacks stations:read'),
          '404': notFound,
        },
      },
      delete: {
        operationId: 'cancelFirmwareRollout',
        summary: 'Cancels every station not yet sent; those under way finish',
        security: operate,
        parameters: [idParameter],
        responses: {
          '200': json(ref('FirmwareRollout'), 'The rollout, cancelled (or as it ended before)'),
          ...bearerErrors,
          '403': error('The application lacks stations:operate'),
          '404': notFound,
        },
      },
    },
  };
}
