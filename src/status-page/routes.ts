import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { StatusGuard } from '../http/index.js';
import { readStatusScript, STATUS_CSS, STATUS_HTML } from './page-assets.js';
import { statusSnapshot, type StatusSnapshotSources } from './status-snapshot.js';

/** Only our own script and style, no framing: the page is unauthenticated and may sit on the site LAN. */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

function asset(reply: FastifyReply, contentType: string, body: string): FastifyReply {
  return reply
    .header('content-type', contentType)
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-cache')
    .send(body);
}

/**
 * GET / (the read-only status page), its script and style, and GET /status.json (the data it polls). The page and
 * its data pass `guard` (a status:read token on a non-loopback listener); the script and style hold no data.
 */
export function statusPageRoutes(sources: StatusSnapshotSources, guard: StatusGuard): FastifyPluginAsync {
  const script = readStatusScript();
  return async (app) => {
    app.get('/', { onRequest: guard }, (_request, reply) => asset(reply, 'text/html; charset=utf-8', STATUS_HTML));
    app.get('/status.js', (_request, reply) => asset(reply, 'text/javascript; charset=utf-8', script));
    app.get('/status.css', (_request, reply) => asset(reply, 'text/css; charset=utf-8', STATUS_CSS));
    // Browsers ask for it on every page: an empty answer instead of a 404 in the console.
    app.get('/favicon.ico', (_request, reply) => reply.status(204).send());
    app.get('/status.json', { onRequest: guard }, async (_request, reply) => {
      void reply.header('cache-control', 'no-store');
      return statusSnapshot(sources);
    });
  };
}
