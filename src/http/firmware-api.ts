import type { FastifyInstance, FastifyRequest } from 'fastify';
import { FirmwareError, type FirmwareRollouts, type RolloutView } from '../firmware/index.js';
import type { StationInventory } from '../stations/index.js';
import { parseRequest } from './api-schemas.js';
import { insufficientScope } from './bearer-auth.js';
import { ApiError } from './http-errors.js';
import { rolloutParamsSchema, rolloutRequestSchema } from './firmware-schemas.js';
import type { StationPermission, StationPrincipal } from './stations-api.js';

export interface FirmwareRoutesDeps {
  rollouts: Pick<FirmwareRollouts, 'create' | 'view' | 'cancel' | 'recent'>;
  /** Every station with its site: whom a caller's groups reach. */
  stations(): Pick<StationInventory, 'id' | 'site'>[];
  principal(request: FastifyRequest): Promise<StationPrincipal>;
}

/**
 * The firmware rollouts API (contract 11.2): POST /firmware/rollouts (201), GET and DELETE /firmware/rollouts/{id},
 * and GET /firmware/rollouts (the newest 20, for `firmware status`).
 * A caller sees and acts on a rollout only if its groups reach every station in it (404 otherwise, as for a
 * station). One plugin for both listeners: the HTTP API with bearer tokens, and the CLI's local socket.
 */
export async function registerFirmwareRoutes(app: FastifyInstance, deps: FirmwareRoutesDeps): Promise<void> {
  const { rollouts } = deps;

  const allowed = async (request: FastifyRequest, permission: StationPermission): Promise<StationPrincipal> => {
    const principal = await deps.principal(request);
    if (!principal.may(permission)) throw insufficientScope(permission);
    return principal;
  };

  const reachesAll = (principal: StationPrincipal, stationIds: string[], permission: StationPermission): boolean => {
    const stations = deps.stations();
    return stationIds.every((id) => {
      const station = stations.find((s) => s.id === id);
      return station !== undefined && principal.reaches(station, permission);
    });
  };

  const reachable = (principal: StationPrincipal, params: unknown, permission: StationPermission): RolloutView => {
    const { id } = parseRequest(rolloutParamsSchema, params, 'path');
    const rollout = rollouts.view(id);
    if (
      !rollout ||
      !reachesAll(
        principal,
        rollout.stations.map((s) => s.stationId),
        permission,
      )
    )
      throw new ApiError(404, 'not_found', `no firmware rollout "${id}" within the caller's reach`);
    return rollout;
  };

  app.post('/firmware/rollouts', async (request, reply) => {
    const principal = await allowed(request, 'stations:operate');
    const body = parseRequest(rolloutRequestSchema, request.body, 'body');
    const named =
      body.stationIds ??
      deps
        .stations()
        .filter((s) => s.site === body.siteId)
        .map((s) => s.id);
    if (!reachesAll(principal, named, 'stations:operate'))
      throw new ApiError(404, 'not_found', "a station of the rollout is not within the caller's reach");
    const rollout = refusalsAsApiErrors(() =>
      rollouts.create({
        imageId: body.imageId,
        ...(body.stationIds !== undefined && { stationIds: body.stationIds }),
        ...(body.siteId !== undefined && { siteId: body.siteId }),
        parallel: body.parallel,
        force: body.force,
        continueOnFailure: body.continueOnFailure,
        who: principal.caller,
      }),
    );
    return reply.status(201).send(rollout);
  });

  app.get('/firmware/rollouts', async (request): Promise<RolloutView[]> => {
    const principal = await allowed(request, 'stations:read');
    return rollouts.recent().filter((r) =>
      reachesAll(
        principal,
        r.stations.map((s) => s.stationId),
        'stations:read',
      ),
    );
  });

  app.get('/firmware/rollouts/:id', async (request) => {
    const principal = await allowed(request, 'stations:read');
    return reachable(principal, request.params, 'stations:read');
  });

  app.delete('/firmware/rollouts/:id', async (request) => {
    const principal = await allowed(request, 'stations:operate');
    const rollout = reachable(principal, request.params, 'stations:operate');
    return rollouts.cancel(rollout.rolloutId, principal.caller);
  });
}

function refusalsAsApiErrors<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof FirmwareError)) throw err;
    if (err.kind === 'conflict') throw new ApiError(409, 'conflict', err.message);
    if (err.kind === 'not-found') throw new ApiError(404, 'not_found', err.message);
    throw new ApiError(400, 'invalid_request', err.message);
  }
}
