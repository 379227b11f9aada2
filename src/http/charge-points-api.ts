import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import { reaches } from '../applications/index.js';
import type { Config, Permission } from '../config/index.js';
import type { RemoteCharging } from '../ocpp/index.js';
import type { ChargePointView, Site } from '../site/index.js';
import { ApiError } from './http-errors.js';
import { chargePointParamsSchema, parseRequest, startRequestSchema, stopRequestSchema } from './api-schemas.js';
import type { BearerAuth, Caller } from './bearer-auth.js';

export interface ChargePointsApiOptions {
  site: Site;
  auth: BearerAuth;
  /** Remote start and stop: to the station over its live connection, as the CSMS's through the uplink. */
  remoteCharging: RemoteCharging;
  config: () => Config;
  metrics?: Registry;
}

/**
 * GET /charge-points and the remote start/stop commands (docs/partners/index.md#for-partners). The answer to a command is the
 * station's verdict: 202 Accepted, 409 Rejected, 503 offline, 504 no answer in time.
 */
export function chargePointsApiRoutes(options: ChargePointsApiOptions): FastifyPluginAsync {
  const { site, auth, remoteCharging } = options;

  const reachable = (caller: Caller, permission: Permission, at: ChargePointView): boolean =>
    reaches(caller.grants, permission, options.config().company.id, at);

  /** The charge point named in the path, if it exists and the caller's groups reach it. */
  const reachableChargePoint = (caller: Caller, params: unknown, permission: Permission): ChargePointView => {
    const { chargePointId } = parseRequest(chargePointParamsSchema, params, 'path');
    const chargePoint = site.connectors.chargePoint(chargePointId);
    if (!chargePoint) throw new ApiError(404, 'not_found', `no charge point "${chargePointId}"`);
    if (!reachable(caller, permission, chargePoint))
      throw new ApiError(403, 'forbidden', `charge point "${chargePointId}" is outside the application's groups`);
    return chargePoint;
  };

  /** The charge point a command goes to: reachable, and an OCPP station's. */
  const chargePointFor = (caller: Caller, params: unknown, permission: Permission): ChargePointView => {
    const chargePoint = reachableChargePoint(caller, params, permission);
    if (site.directory.meter(chargePoint.stationId))
      throw new ApiError(
        422,
        'not_remotely_controllable',
        `charge point "${chargePoint.chargePointId}" is a Modbus-metered charger without OCPP; it cannot be started or stopped remotely`,
      );
    return chargePoint;
  };

  const answers =
    options.metrics &&
    new Counter({
      name: 'chargegate_api_requests_total',
      help: 'Charge-points API answers by route and HTTP status',
      labelNames: ['method', 'route', 'status'],
      registers: [options.metrics],
    });

  return async (app) => {
    app.addHook('onResponse', async (request, reply) => {
      answers?.inc({
        method: request.method,
        route: request.routeOptions.url ?? 'unknown',
        status: String(reply.statusCode),
      });
    });

    app.get('/charge-points', async (request) => {
      const caller = await auth.authenticate(request, 'charge-points:read');
      return site.connectors.chargePoints().filter((cp) => reachable(caller, 'charge-points:read', cp));
    });

    app.get('/charge-points/:chargePointId', async (request) => {
      const caller = await auth.authenticate(request, 'charge-points:read');
      return reachableChargePoint(caller, request.params, 'charge-points:read');
    });

    app.post('/charge-points/:chargePointId/start', async (request, reply) => {
      const caller = await auth.authenticate(request, 'charge-points:control');
      const chargePoint = chargePointFor(caller, request.params, 'charge-points:control');
      const { connectorId, idTag } = parseRequest(startRequestSchema, request.body, 'body');
      if (!chargePoint.connectors.some((c) => c.connectorId === connectorId)) {
        throw new ApiError(
          400,
          'invalid_request',
          `body: connectorId: charge point "${chargePoint.chargePointId}" has connectors ${chargePoint.connectors.map((c) => c.connectorId).join(', ')}`,
        );
      }
      const { status } = await remoteCharging.start(
        chargePoint.stationId,
        { connectorId, idTag },
        { by: 'api', clientId: caller.clientId },
      );
      return answer(reply, status, chargePoint, 'RemoteStartTransaction');
    });

    app.post('/charge-points/:chargePointId/stop', async (request, reply) => {
      const caller = await auth.authenticate(request, 'charge-points:control');
      const chargePoint = chargePointFor(caller, request.params, 'charge-points:control');
      const { transactionId } = parseRequest(stopRequestSchema, request.body, 'body');
      const transaction = site.transactions.byId(transactionId);
      if (!transaction || transaction.chargePointId !== chargePoint.chargePointId)
        throw new ApiError(
          404,
          'not_found',
          `no transaction ${transactionId} on charge point "${chargePoint.chargePointId}"`,
        );
      const { status } = await remoteCharging.stop(transaction, { by: 'api', clientId: caller.clientId });
      return answer(reply, status, chargePoint, 'RemoteStopTransaction');
    });
  };
}

function answer(
  reply: FastifyReply,
  status: 'Accepted' | 'Rejected',
  chargePoint: ChargePointView,
  action: string,
): FastifyReply {
  if (status === 'Rejected')
    throw new ApiError(409, 'rejected', `station "${chargePoint.stationId}" rejected ${action}`, {}, { status });
  return reply.status(202).send({ status, chargePointId: chargePoint.chargePointId, stationId: chargePoint.stationId });
}
