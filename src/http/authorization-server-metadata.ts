import type { FastifyPluginAsync } from 'fastify';
import { PERMISSIONS, type Config } from '../config/index.js';

/**
 * RFC 8414 authorization server metadata, so OAuth libraries (openid-client's discovery, for one) configure
 * themselves from the issuer URL alone; also at the OpenID Connect discovery path.
 */
export function authorizationServerMetadataRoutes(config: () => Config): FastifyPluginAsync {
  return async (app) => {
    const metadata = () => {
      const { issuer } = config().http;
      return {
        issuer,
        token_endpoint: `${issuer}/oauth2/token`,
        jwks_uri: `${issuer}/.well-known/jwks.json`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
        response_types_supported: [],
        scopes_supported: PERMISSIONS,
      };
    };
    app.get('/.well-known/oauth-authorization-server', async () => metadata());
    // docs/partners/tokens.md#getting-a-token-partners: the same document where OpenID Connect discovery looks for it.
    app.get('/.well-known/openid-configuration', async () => metadata());
  };
}
