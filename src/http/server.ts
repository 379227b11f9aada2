import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/index.js';
import { worstLevel, type HealthSource } from '../health/index.js';
import { API_ERRORS, ApiError, jsonErrorHandler } from './http-errors.js';
import type { StatusGuard } from './status-access.js';

/** Largest request body any route reads (the API's JSON, the token endpoint's form). */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface HttpServerOptions {
  logger: Logger;
  /** Route plugins contributed by the parts (token server, API, status page...). */
  routes: FastifyPluginAsync[];
  health: () => HealthSource[];
  metrics: Registry;
  /** Who may read /metrics (status.ts: a status:read token on a non-loopback listener). */
  statusGuard: StatusGuard;
  /** PEM certificate and key: the listener speaks HTTPS (http.tls). */
  https?: { cert: Buffer; key: Buffer };
}

/** The one HTTP listener: every part adds its routes; errors always leave as JSON (http-errors.ts). */
export async function createHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const errors = jsonErrorHandler(API_ERRORS);
  // Typed as Fastify's logger so the instance is a plain FastifyInstance, not one generic over pino's.
  const loggerInstance: FastifyBaseLogger = options.logger.child({ component: 'http' });
  const app: FastifyInstance = Fastify({
    loggerInstance,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // A URL Fastify cannot decode never reaches a route or setErrorHandler.
    frameworkErrors: errors,
    ...(options.https && { https: { ...options.https, minVersion: 'TLSv1.2' as const } }),
  });
  app.setErrorHandler(errors);
  app.setNotFoundHandler((request) => {
    throw new ApiError(404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
  });
  // docs/operating/index.md#operating: a monitor that reads only the status code sees critical as 503.
  app.get('/health', async (_request, reply) => {
    const parts = Object.fromEntries(options.health().map((s) => [s.name, s.report()]));
    const status = worstLevel(Object.values(parts).map((p) => p.status));
    return reply.status(status === 'critical' ? 503 : 200).send({ status, ...parts });
  });
  app.get('/metrics', { onRequest: options.statusGuard }, async (_request, reply) => {
    void reply.header('content-type', options.metrics.contentType);
    return options.metrics.metrics();
  });
  for (const routes of options.routes) await app.register(routes);
  return app;
}
