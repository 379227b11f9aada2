import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { LogCollections, LogFiles, LogRecord } from '../station-logs/index.js';
import type { StationOperations } from '../stations/index.js';
import { parseRequest } from './api-schemas.js';
import { ApiError } from './http-errors.js';
import { allowedCaller, stationInReach, type StationPrincipal } from './stations-api.js';
import { logParamsSchema, logRequestSchema } from './stations-schemas.js';

export interface LogRoutesDeps {
  logs: Pick<LogCollections, 'request' | 'get'>;
  files: Pick<LogFiles, 'pathOf'>;
  stations: Pick<StationOperations, 'detail'>;
  principal(request: FastifyRequest): Promise<StationPrincipal>;
}

/**
 * The station logs API (contract 11.3, docs/operating/firmware-and-logs.md#station-logs): POST /stations/{id}/logs
 * asks the station (202 `{logId, state}`; refusals, offline, busy as the other operations), GET
 * /stations/{id}/logs/{logId} follows it, GET /stations/{id}/logs/{logId}/file downloads the file once it is here.
 * On both listeners: the HTTP API with bearer tokens, and the CLI's local socket.
 */
export function logRoutes(deps: LogRoutesDeps): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    app.post('/stations/:id/logs', async (request, reply) => {
      const principal = await allowedCaller(deps, request, 'stations:operate');
      const { id } = parseRequest(logParamsSchema.pick({ id: true }), request.params, 'path');
      const station = stationInReach(deps.stations, principal, id, 'stations:operate');
      const ask = parseRequest(logRequestSchema, request.body ?? {}, 'body');
      const { record, outcome } = await deps.logs.request(station.id, principal.caller, {
        ...(ask.since !== undefined && { since: ask.since }),
        ...(ask.via !== undefined && { via: ask.via }),
      });
      const { answer } = outcome;
      if (!outcome.succeeded)
        throw new ApiError(
          409,
          'station_refused',
          `station "${answer.stationId}" refused ${answer.action}: ${answer.status}`,
          {},
          { ...answer, logId: record.logId },
        );
      return reply.status(202).send({ logId: record.logId, state: record.state });
    });

    app.get('/stations/:id/logs/:logId', async (request) => {
      const record = await readable(request);
      return record;
    });

    app.get('/stations/:id/logs/:logId/file', async (request, reply) => {
      const record = await readable(request);
      const file = record.file && !record.file.removed ? deps.files.pathOf(record.logId, record.file.name) : undefined;
      if (!record.file || !file)
        throw new ApiError(404, 'not_found', `log ${record.logId} has no file here (state ${record.state})`);
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-disposition', `attachment; filename="${record.file.name}"`)
        .send(createReadStream(file));
    });
  };

  /** The collection in the path, of a station the caller may read: else 404, alike. */
  async function readable(request: FastifyRequest): Promise<LogRecord> {
    const principal = await allowedCaller(deps, request, 'stations:read');
    const { id, logId } = parseRequest(logParamsSchema, request.params, 'path');
    const station = stationInReach(deps.stations, principal, id, 'stations:read');
    const record = deps.logs.get(logId);
    if (!record || record.stationId !== station.id)
      throw new ApiError(404, 'not_found', `no log ${logId} of station "${station.id}"`);
    return record;
  }
}
