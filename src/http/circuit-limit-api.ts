import type { FastifyPluginAsync } from 'fastify';
import type { z } from 'zod';
import { reachesSite } from '../applications/index.js';
import type { Config, Permission } from '../config/index.js';
import {
  circuitLimitState,
  findCircuit,
  type ConfiguredCircuit,
  type TemporaryLimit,
  type TemporaryLimits,
} from '../load/index.js';
import { formatZonedTimestamp } from '../time/index.js';
import {
  circuitParamsSchema,
  parseRequest,
  temporaryLimitRequestSchema,
  type circuitLimitSchema,
} from './api-schemas.js';
import type { BearerAuth, Caller } from './bearer-auth.js';
import { ApiError } from './http-errors.js';

export interface CircuitLimitApiOptions {
  auth: BearerAuth;
  config: () => Config;
  temporaryLimits: Pick<TemporaryLimits, 'of' | 'set' | 'clear'>;
}

type CircuitLimit = z.output<typeof circuitLimitSchema>;

/**
 * Temporary circuit limits (docs/configuration/circuits.md#circuits-load-management): a grid operator's dimming order or a
 * demand-response event through the API. `PUT /sites/{siteId}/circuits/{circuitId}/limit` sets one (replacing any
 * before it), `DELETE` ends it, `GET` shows the circuit's limits. Writing needs charge-points:control on the whole
 * site (a company or site grant): a circuit's limit is shared by every charge point on it, so a grant on one station
 * or charge point does not reach it.
 */
export function circuitLimitApiRoutes(options: CircuitLimitApiOptions): FastifyPluginAsync {
  const { auth, config, temporaryLimits } = options;

  /**
   * The circuit named in the path, if its site exists, the caller's groups reach the whole site (a company or site
   * grant: a circuit carries every charge point on it), and the circuit is on it.
   */
  const reachableCircuit = (caller: Caller, params: unknown, permission: Permission): ConfiguredCircuit => {
    const { siteId, circuitId } = parseRequest(circuitParamsSchema, params, 'path');
    const current = config();
    if (!current.sites.some((s) => s.id === siteId)) throw new ApiError(404, 'not_found', `no site "${siteId}"`);
    if (!reachesSite(caller.grants, permission, current.company.id, siteId))
      throw new ApiError(
        403,
        'forbidden',
        `site "${siteId}" is outside the application's groups: a circuit needs ${permission} on its site or the company`,
      );
    const found = findCircuit(current, circuitId);
    if (!found || found.siteId !== siteId)
      throw new ApiError(404, 'not_found', `no circuit "${circuitId}" in site "${siteId}"`);
    return found;
  };

  const view = (found: ConfiguredCircuit, limit: TemporaryLimit | undefined): CircuitLimit =>
    circuitLimitState(found, limit, (at) => formatZonedTimestamp(at, config().timezone));

  return async (app) => {
    app.get('/sites/:siteId/circuits/:circuitId/limit', async (request): Promise<CircuitLimit> => {
      const caller = await auth.authenticate(request, 'charge-points:read');
      const found = reachableCircuit(caller, request.params, 'charge-points:read');
      return view(found, temporaryLimits.of(found.circuit.id));
    });

    app.put('/sites/:siteId/circuits/:circuitId/limit', async (request): Promise<CircuitLimit> => {
      const caller = await auth.authenticate(request, 'charge-points:control');
      const found = reachableCircuit(caller, request.params, 'charge-points:control');
      const { maxCurrentA, until } = parseRequest(temporaryLimitRequestSchema, request.body, 'body');
      const limit = await temporaryLimits.set({
        circuitId: found.circuit.id,
        siteId: found.siteId,
        maxCurrentA,
        until: new Date(until),
        setBy: `api:${caller.clientId}`,
      });
      request.log.info(
        { clientId: caller.clientId, siteId: found.siteId, circuitId: found.circuit.id, maxCurrentA, until },
        'temporary circuit limit set',
      );
      return view(found, limit);
    });

    app.delete('/sites/:siteId/circuits/:circuitId/limit', async (request, reply) => {
      const caller = await auth.authenticate(request, 'charge-points:control');
      const found = reachableCircuit(caller, request.params, 'charge-points:control');
      const ended = await temporaryLimits.clear(found.circuit.id);
      if (!ended) throw new ApiError(404, 'not_found', `circuit "${found.circuit.id}" has no temporary limit in force`);
      request.log.info(
        { clientId: caller.clientId, siteId: found.siteId, circuitId: found.circuit.id },
        'temporary circuit limit cleared',
      );
      return reply.status(204).send();
    });
  };
}
