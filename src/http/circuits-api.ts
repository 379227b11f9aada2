import type { FastifyPluginAsync } from 'fastify';
import type { z } from 'zod';
import { reachesSite } from '../applications/index.js';
import type { Config } from '../config/index.js';
import type { LoadStatus } from '../load/index.js';
import { parseRequest, siteParamsSchema, type siteCircuitsSchema } from './api-schemas.js';
import type { BearerAuth } from './bearer-auth.js';
import { ApiError } from './http-errors.js';

export interface CircuitsApiOptions {
  auth: BearerAuth;
  config: () => Config;
  /** What load management does now; undefined while no site has circuits. */
  load: () => LoadStatus | undefined;
}

/**
 * GET /sites/{siteId}/circuits (docs/configuration/circuits.md#circuits-load-management): each circuit's limit, measured and other load and
 * headroom, and each managed connector's state and allowance. A circuit carries every charge point on it, so only an
 * application whose groups reach the whole site (a company or site scope) sees them.
 */
export function circuitsApiRoutes(options: CircuitsApiOptions): FastifyPluginAsync {
  const { auth, config } = options;
  return async (app) => {
    app.get('/sites/:siteId/circuits', async (request): Promise<z.output<typeof siteCircuitsSchema>> => {
      const caller = await auth.authenticate(request, 'charge-points:read');
      const { siteId } = parseRequest(siteParamsSchema, request.params, 'path');
      const { company, sites } = config();
      if (!sites.some((s) => s.id === siteId)) throw new ApiError(404, 'not_found', `no site "${siteId}"`);
      if (!reachesSite(caller.grants, 'charge-points:read', company.id, siteId))
        throw new ApiError(
          403,
          'forbidden',
          `site "${siteId}" is outside the application's groups (circuits need a company or site scope)`,
        );
      const load = options.load() ?? { circuits: [], connectors: [] };
      return {
        siteId,
        circuits: load.circuits.filter((c) => c.siteId === siteId).map(({ siteId: _site, ...circuit }) => circuit),
        connectors: load.connectors
          .filter((k) => k.siteId === siteId)
          .map(({ siteId: _site, ...connector }) => connector),
      };
    });
  };
}
