import type { FastifyRequest } from 'fastify';
import { isLoopbackHost, type Config } from '../config/index.js';
import type { BearerAuth } from './bearer-auth.js';

/**
 * Checks a request for the status page, status.json or /metrics; throws the 401/403 ApiError when it may not see them.
 */
export type StatusGuard = (request: FastifyRequest) => Promise<void>;

/**
 * docs/operating/security.md#security: on a non-loopback listener the status page, status.json and /metrics show the site (station
 * ids, transactions, queues) only to a Bearer token with `status:read`, unless `http.publicStatus` opens them.
 */
export function statusGuard(config: () => Config, auth: BearerAuth): StatusGuard {
  return async (request) => {
    const { host, publicStatus } = config().http;
    if (publicStatus || isLoopbackHost(host)) return;
    await auth.authenticate(request, 'status:read');
  };
}
