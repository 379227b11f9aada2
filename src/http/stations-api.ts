import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { reachesStation } from '../applications/index.js';
import type { Config } from '../config/index.js';
import type {
  OperationOutcome,
  StationDetail,
  StationInventory,
  StationOperation,
  StationOperations,
} from '../stations/index.js';
import { parseRequest } from './api-schemas.js';
import { insufficientScope, mayUse, type BearerAuth } from './bearer-auth.js';
import { ApiError } from './http-errors.js';
import {
  availabilityRequestSchema,
  configurationQuerySchema,
  configurationSetRequestSchema,
  resetRequestSchema,
  stationParamsSchema,
  triggerRequestSchema,
  unlockRequestSchema,
} from './stations-schemas.js';

export type StationPermission = 'stations:read' | 'stations:operate';

/** Who asks, and what they may do: a bearer token's application, or `cli` on the data dir's local socket. */
export interface StationPrincipal {
  /** Recorded with each operation: `cli` or the API client id. */
  caller: string;
  /** Whether the caller holds the permission at all (else 403). */
  may(permission: StationPermission): boolean;
  /** Whether the caller's grants of the permission reach the station (else 404: it does not exist for them). */
  reaches(station: { id: string; site: string | null }, permission: StationPermission): boolean;
}

export interface StationRoutesDeps {
  stations: Pick<StationOperations, 'list' | 'detail' | 'run'>;
  /** Rejects with an ApiError (401) when the request carries no acceptable identity. */
  principal(request: FastifyRequest): Promise<StationPrincipal>;
}

/**
 * The stations API (contract 11.1, docs/operating/stations-api.md): GET /stations, GET /stations/{id}, the
 * operations, GET|PUT /stations/{id}/configuration. An answer is 200 with `{stationId, action, status,
 * statusInfo?, result?}` when the station did what it was asked, 409 station_refused with the same fields when it
 * refused, 503 station_offline, 504 station_timeout, 429 station_busy (http-errors.ts maps the errors).
 * One plugin for both listeners: the HTTP API with bearer tokens, and the CLI's local socket.
 */
export async function registerStationRoutes(app: FastifyInstance, deps: StationRoutesDeps): Promise<void> {
  const { stations } = deps;
  const allowed = (request: FastifyRequest, permission: StationPermission) => allowedCaller(deps, request, permission);
  const reachable = (principal: StationPrincipal, params: unknown, permission: StationPermission) =>
    stationInReach(stations, principal, parseRequest(stationParamsSchema, params, 'path').id, permission);

  /** An operation route: stations:operate, the station in reach, the body parsed into the operation. */
  const operate = (path: string, operationOf: (body: unknown) => StationOperation): void => {
    app.post(`/stations/:id/${path}`, async (request, reply) => {
      const principal = await allowed(request, 'stations:operate');
      const station = reachable(principal, request.params, 'stations:operate');
      const outcome = await stations.run(station.id, principal.caller, operationOf(request.body));
      return answer(reply, outcome);
    });
  };

  app.get('/stations', async (request): Promise<StationInventory[]> => {
    const principal = await allowed(request, 'stations:read');
    return stations.list().filter((s) => principal.reaches(s, 'stations:read'));
  });

  app.get('/stations/:id', async (request): Promise<StationDetail> => {
    const principal = await allowed(request, 'stations:read');
    return reachable(principal, request.params, 'stations:read');
  });

  operate('reset', (body) => ({
    kind: 'reset',
    hard: parseRequest(resetRequestSchema, body, 'body').type === 'hard',
  }));
  operate('unlock', (body) => ({ kind: 'unlock', ...parseRequest(unlockRequestSchema, body, 'body') }));
  operate('availability', (body) => {
    const { connectorId, operative } = parseRequest(availabilityRequestSchema, body, 'body');
    return { kind: 'availability', operative, ...(connectorId !== undefined && { connectorId }) };
  });
  operate('trigger', (body) => {
    const { message, connectorId } = parseRequest(triggerRequestSchema, body, 'body');
    return { kind: 'trigger', message, ...(connectorId !== undefined && { connectorId }) };
  });
  operate('clear-cache', () => ({ kind: 'clear-cache' }));
  operate('report', () => ({ kind: 'report' }));

  // Contract 11.1: stations:read suffices for reads, this one included (it changes nothing on the station).
  app.get('/stations/:id/configuration', async (request, reply) => {
    const principal = await allowed(request, 'stations:read');
    const station = reachable(principal, request.params, 'stations:read');
    const { key: keys } = parseRequest(configurationQuerySchema, request.query, 'query');
    return answer(reply, await stations.run(station.id, principal.caller, { kind: 'config-get', keys }));
  });

  app.put('/stations/:id/configuration', async (request, reply) => {
    const principal = await allowed(request, 'stations:operate');
    const station = reachable(principal, request.params, 'stations:operate');
    const { key, value } = parseRequest(configurationSetRequestSchema, request.body, 'body');
    return answer(reply, await stations.run(station.id, principal.caller, { kind: 'config-set', key, value }));
  });
}

/** The caller, if it holds the permission (403 otherwise). */
export async function allowedCaller(
  deps: Pick<StationRoutesDeps, 'principal'>,
  request: FastifyRequest,
  permission: StationPermission,
): Promise<StationPrincipal> {
  const principal = await deps.principal(request);
  if (!principal.may(permission)) throw insufficientScope(permission);
  return principal;
}

/** The station, if it exists and the caller's grants reach it: else 404, alike. */
export function stationInReach(
  stations: Pick<StationOperations, 'detail'>,
  principal: StationPrincipal,
  id: string,
  permission: StationPermission,
): StationDetail {
  const station = stations.detail(id);
  if (!station || !principal.reaches(station, permission))
    throw new ApiError(404, 'not_found', `no station "${id}" within the caller's reach`);
  return station;
}

function answer(reply: FastifyReply, { answer, succeeded }: OperationOutcome): FastifyReply {
  if (!succeeded)
    throw new ApiError(
      409,
      'station_refused',
      `station "${answer.stationId}" refused ${answer.action}: ${answer.status}`,
      {},
      { ...answer },
    );
  return reply.status(200).send(answer);
}

/** The principal of an API request: its bearer token's application, reaching stations through its groups. */
export function bearerPrincipal(
  auth: BearerAuth,
  config: () => Config,
): (request: FastifyRequest) => Promise<StationPrincipal> {
  return async (request) => {
    const caller = await auth.identify(request);
    return {
      caller: caller.clientId,
      may: (permission) => mayUse(caller, permission),
      reaches: (station, permission) =>
        reachesStation(caller.grants, permission, config().company.id, { id: station.id, siteId: station.site }),
    };
  };
}
