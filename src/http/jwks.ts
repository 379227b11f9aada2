import type { FastifyPluginAsync } from 'fastify';
import type { Keystore } from '../keystore/index.js';

/**
 * GET /.well-known/jwks.json (docs/partners/webhooks.md#checking-the-signature): public keys only. Read from the keystore per request so
 * a rotation shows at once; a short max-age keeps verifiers that cache close to what signs.
 */
export function jwksRoutes(keystore: Keystore): FastifyPluginAsync {
  return async (app) => {
    app.get('/.well-known/jwks.json', async (_request, reply) => {
      void reply.header('cache-control', 'public, max-age=300');
      return keystore.jwks();
    });
  };
}
