import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/index.js';
import { worstLevel, type HealthSource } from './health.js';

export interface HttpServerOptions {
  logger: Logger;
  /** Route plugins contributed by the parts (token server, API, status page...). */
  routes: FastifyPluginAsync[];
  health: () => HealthSource[];
  metrics: Registry;
}

/** The one HTTP listener: every part adds its routes; errors always leave as JSON. */
export async function createHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({ loggerInstance: options.logger.child({ component: 'http' }) as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }), trustProxy: false, bodyLimit: 64 * 1024 });
  app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, request, reply) => {
    const statusCode = err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
    if (statusCode >= 500) request.log.error({ err }, 'request failed');
    void reply.status(statusCode).send({ error: statusCode >= 500 ? 'server_error' : (err.code ?? 'bad_request').toLowerCase(), message: statusCode >= 500 ? 'internal error' : err.message });
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` });
  });
  app.get('/health', async () => {
    const parts = Object.fromEntries(options.health().map((s) => [s.name, s.report()]));
    return { status: worstLevel(Object.values(parts).map((p) => p.status)), ...parts };
  });
  app.get('/metrics', async (_request, reply) => {
    void reply.header('content-type', options.metrics.contentType);
    return options.metrics.metrics();
  });
  for (const routes of options.routes) await app.register(routes);
  return app;
}
