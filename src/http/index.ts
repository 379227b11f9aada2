export { createHttpServer, type HttpServerOptions } from './server.js';
export { worstLevel, type HealthLevel, type HealthSource } from './health.js';
export { jwksRoutes } from './jwks.js';
