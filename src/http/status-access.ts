import type { FastifyRequest } from 'fastify';
import type { Config } from '../config/index.js';
import type { BearerAuth } from './bearer-auth.js';

/** Addresses only this machine can reach: what listens there is not on the site LAN. */
function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Checks a request for the status page, status.json or /metrics; throws the 401/403 ApiError when it may not see them. */
export type StatusGuard = (request: FastifyRequest) => Promise<void>;

/**
 * Contract section 8: on a non-loopback listener the status page, status.json and /metrics show the site (station
 * ids, transactions, queues) only to a Bearer token with `status:read`, unless `http.publicStatus` opens them.
 */
export function statusGuard(config: () => Config, auth: BearerAuth): StatusGuard {
  return async (request) => {
    const { host, publicStatus } = config().http;
    if (publicStatus || isLoopbackHost(host)) return;
    await auth.authenticate(request, 'status:read');
  };
}
