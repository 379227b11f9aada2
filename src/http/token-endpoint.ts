import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import { grantsOf, issueAccessToken, scopeOf, type Applications } from '../applications/index.js';
import type { Config } from '../config/index.js';
import { ACCESS_TOKEN_LIFETIME_S, type Keystore } from '../keystore/index.js';
import { FailureLimiter } from '../credentials/index.js';
import { HttpError, jsonErrorHandler, type ErrorSurface } from './http-errors.js';

export interface TokenEndpointOptions {
  applications: Applications;
  keystore: Keystore;
  config: () => Config;
  metrics?: Registry;
}

/** The error codes of RFC 6749 section 5.2 this endpoint sends; `server_error` is its 500. */
export const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'unsupported_grant_type',
  'invalid_scope',
  'slow_down',
  'server_error',
] as const;

/** An error response of RFC 6749 section 5.2 (429 slow_down: RFC 8628's name for "too many, wait"). */
class OAuthError extends HttpError<(typeof OAUTH_ERROR_CODES)[number]> {
  constructor(
    statusCode: 400 | 401 | 429,
    error: Exclude<(typeof OAUTH_ERROR_CODES)[number], 'server_error'>,
    description: string,
    headers: Record<string, string> = {},
  ) {
    super(statusCode, error, description, headers);
  }
}

/**
 * RFC 6749 section 5.2 bodies; a request Fastify refused to read is an invalid_request (400, whatever Fastify said).
 */
const OAUTH_ERRORS: ErrorSurface = {
  name: 'token',
  // A refusal here is usually a client authentication failure: worth a warning.
  refusalLevel: 'warn',
  translate: (refusal) =>
    refusal instanceof OAuthError ? refusal : new OAuthError(400, 'invalid_request', refusal.message),
  body: (error) => ({ error: error.error, error_description: error.message }),
};

const FORM = 'application/x-www-form-urlencoded';
/** RFC 6749 section 5.2: invalid_client after HTTP Basic answers with a challenge. */
const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="chargegate", charset="UTF-8"' };

/**
 * POST /oauth2/token: the client credentials grant (RFC 6749 section 4.4) for the applications in the database.
 * Credentials come in the form body or HTTP Basic, never both with different values; a `scope` parameter may
 * narrow the token to some of the permissions the application's groups give.
 */
export function tokenEndpointRoutes(options: TokenEndpointOptions): FastifyPluginAsync {
  const failures = new FailureLimiter();
  const requests =
    options.metrics &&
    new Counter({
      name: 'chargegate_token_requests_total',
      help: 'POST /oauth2/token by outcome: issued, or the RFC 6749 error code',
      labelNames: ['outcome'],
      registers: [options.metrics],
    });
  return async (app) => {
    // Scoped to this plugin: the raw form text, so repeated parameters can be refused (RFC 6749 section 3.2).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    app.addHook('onSend', async (_request, reply) => {
      void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    });
    app.setErrorHandler(jsonErrorHandler(OAUTH_ERRORS));

    app.post('/oauth2/token', async (request, reply) => {
      const address = request.ip;
      try {
        const credentials = readTokenRequest(request);
        // docs/operating/security.md#security: an address with 10 failures in the last minute is answered at once, without hashing.
        const limit = failures.check(address);
        if (!limit.allowed)
          throw new OAuthError(
            429,
            'slow_down',
            `too many failed client authentications from ${address}; retry in ${limit.retryAfterS} s`,
            {
              'retry-after': String(limit.retryAfterS),
            },
          );
        let application: Awaited<ReturnType<Applications['authenticate']>>;
        try {
          application = await options.applications.authenticate(credentials.clientId, credentials.clientSecret);
        } finally {
          limit.ticket.done(application !== undefined);
        }
        if (!application)
          throw new OAuthError(
            401,
            'invalid_client',
            'client authentication failed',
            credentials.viaBasic ? BASIC_CHALLENGE : {},
          );
        const config = options.config();
        const scope = narrowedScope(scopeOf(grantsOf(config, application.groupIds)), credentials.scope);
        const { token } = await issueAccessToken({
          keystore: options.keystore,
          issuer: config.http.issuer,
          application,
          scope,
        });
        request.log.info({ clientId: application.clientId, address }, 'access token issued');
        requests?.inc({ outcome: 'issued' });
        return reply
          .status(200)
          .send({ access_token: token, token_type: 'Bearer', expires_in: ACCESS_TOKEN_LIFETIME_S, scope });
      } catch (err) {
        if (err instanceof OAuthError) {
          requests?.inc({ outcome: err.error });
        }
        throw err;
      }
    });
  };
}

/** Validates the request in RFC 6749 order and returns the client credentials it carries. */
function readTokenRequest(request: FastifyRequest): {
  clientId: string;
  clientSecret: string;
  viaBasic: boolean;
  scope: string | null;
} {
  const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== FORM || typeof request.body !== 'string')
    throw new OAuthError(400, 'invalid_request', `the body must be ${FORM}`);
  const form = new URLSearchParams(request.body);
  for (const name of new Set(form.keys())) {
    if (form.getAll(name).length > 1) throw new OAuthError(400, 'invalid_request', `parameter "${name}" repeated`);
  }
  const grantType = form.get('grant_type');
  if (!grantType) throw new OAuthError(400, 'invalid_request', 'grant_type is required');
  if (grantType !== 'client_credentials')
    throw new OAuthError(
      400,
      'unsupported_grant_type',
      `grant_type "${grantType}" is not supported; use client_credentials`,
    );
  const scope = form.get('scope');

  const basic = readBasic(request.headers.authorization);
  const bodyId = form.get('client_id');
  const bodySecret = form.get('client_secret');
  if (basic) {
    if ((bodyId !== null && bodyId !== basic.clientId) || (bodySecret !== null && bodySecret !== basic.clientSecret)) {
      throw new OAuthError(
        400,
        'invalid_request',
        'client credentials in both HTTP Basic and the form body, with different values',
      );
    }
    return { ...basic, viaBasic: true, scope };
  }
  if (!bodyId || !bodySecret)
    throw new OAuthError(
      401,
      'invalid_client',
      'no client authentication: send client_id and client_secret in the form body or HTTP Basic',
    );
  return { clientId: bodyId, clientSecret: bodySecret, viaBasic: false, scope };
}

/**
 * docs/partners/tokens.md#getting-a-token-partners: a `scope` naming a subset of the application's permissions narrows the token to
 * it (a partner's billing job need not hold charge-points:control); anything else is invalid_scope. Without one the
 * token gets every permission of the application's groups.
 */
function narrowedScope(granted: string, requested: string | null): string {
  if (requested === null) return granted;
  const asked = [...new Set(requested.split(' ').filter(Boolean))];
  const allowed = new Set(granted.split(' ').filter(Boolean));
  const beyond = asked.filter((permission) => !allowed.has(permission));
  if (asked.length === 0 || beyond.length > 0) {
    throw new OAuthError(
      400,
      'invalid_scope',
      `scope ${beyond.length > 0 ? `"${beyond.join(' ')}" is` : 'is empty,'} not within the application's permissions: ${granted || '(none)'}`,
    );
  }
  return asked.sort().join(' ');
}

/**
 * HTTP Basic client authentication, RFC 6749 section 2.3.1: user and password are form-urlencoded before base64.
 * Any other Authorization scheme is an unsupported authentication method (invalid_client).
 */
function readBasic(header: string | undefined): { clientId: string; clientSecret: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^basic[ ]+([A-Za-z0-9+/]+=*)[ ]*$/i.exec(header);
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0)
    throw new OAuthError(
      401,
      'invalid_client',
      'malformed or unsupported Authorization header; use Basic with client_id:client_secret',
      BASIC_CHALLENGE,
    );
  try {
    return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw new OAuthError(
      401,
      'invalid_client',
      'malformed Basic credentials: user and password must be form-urlencoded',
      BASIC_CHALLENGE,
    );
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}
