import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { Config, Permission } from '../config/index.js';
import { ACCESS_TOKEN_LIFETIME_S } from '../keystore/index.js';
import { apiSchemas, EVENTS_MAX_LIMIT, TRANSACTIONS_MAX_LIMIT } from './api-schemas.js';
import { BODY_LIMIT_BYTES } from './server.js';
import { firmwarePaths } from './firmware-openapi.js';
import { stationPaths } from './stations-openapi.js';
import { OAUTH_ERROR_CODES } from './token-endpoint.js';

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(ref('Error'), description);

/** Every permission a group can grant, as OAuth scopes (a token's `scope` lists those of its groups). */
const PERMISSION_DESCRIPTIONS: Record<Permission, string> = {
  'charge-points:read': "List charge points, read the session history, the circuits and a circuit's limits",
  'charge-points:control': 'Start and stop transactions; set temporary circuit limits (needs a site or company grant)',
  'events:read': 'Read the site events (GET /events): catch up after an outage without a replay',
  'status:read': 'Read the status page, status.json and /metrics on a non-loopback listener',
  'stations:read': 'List the stations and what each is (GET /stations), with their last operations',
  'stations:operate':
    'Reset, unlock, change availability, trigger, read and change the configuration of stations; roll firmware out',
};

/** Responses every Bearer-protected operation can give (RFC 6750), and any operation's internal failure. */
const BEARER_ERRORS = {
  '401': {
    ...error('Missing, malformed, expired, wrongly signed or revoked access token'),
    headers: { 'WWW-Authenticate': { schema: { type: 'string' }, description: 'Bearer challenge (RFC 6750)' } },
  },
  '403': error('The application lacks the permission, or the charge point is outside its groups'),
  default: error('`server_error`: an internal failure; the gateway log has the details'),
};

const COMMAND_ERRORS = {
  '400': error('Invalid path or body (also a body that is not JSON); `problems` lists each field when it is JSON'),
  ...BEARER_ERRORS,
  '404': error('No such charge point (or transaction on it)'),
  '409': error('The station rejected the command (`status: "Rejected"`), or the transaction already stopped'),
  '413': error(`The body is over ${BODY_LIMIT_BYTES} bytes`),
  '415': error('The body is not application/json'),
  '422': error('The charge point has no OCPP station (Modbus-metered charger)'),
  '502': error('The station answered with an OCPP CALLERROR'),
  '503': error('The station is not connected'),
  '504': error('The station did not answer in time'),
};

/** POST /charge-points/{chargePointId}/start|stop: same security, parameter and answers, their own body. */
function commandOperation(operationId: string, summary: string, body: string): Record<string, unknown> {
  return {
    post: {
      operationId,
      summary,
      security: [{ bearer: [] }, { oauth2: ['charge-points:control'] }],
      parameters: [{ name: 'chargePointId', in: 'path', required: true, schema: { type: 'string' } }],
      requestBody: { required: true, content: { 'application/json': { schema: ref(body) } } },
      responses: { '202': json(ref('CommandAccepted'), 'The station accepted'), ...COMMAND_ERRORS },
    },
  };
}

const CIRCUIT_PARAMETERS = [
  { name: 'siteId', in: 'path', required: true, schema: { type: 'string' } },
  { name: 'circuitId', in: 'path', required: true, schema: { type: 'string' } },
];

/** GET, PUT and DELETE /sites/{siteId}/circuits/{circuitId}/limit: a circuit's temporary limit. */
function circuitLimitOperations(): Record<string, unknown> {
  const control = [{ bearer: [] }, { oauth2: ['charge-points:control'] }];
  const forbidden = error(
    'The application lacks the permission, or its groups do not reach the whole site (a station or charge point grant does not)',
  );
  return {
    get: {
      operationId: 'getCircuitLimit',
      summary: "A circuit's configured limit, the temporary limit in force (if any) and the limit that applies",
      security: [{ bearer: [] }, { oauth2: ['charge-points:read'] }],
      parameters: CIRCUIT_PARAMETERS,
      responses: {
        '200': json(ref('CircuitLimit'), "The circuit's limits"),
        ...BEARER_ERRORS,
        '403': forbidden,
        '404': error('No such site, or no such circuit in it'),
      },
    },
    put: {
      operationId: 'setCircuitLimit',
      summary:
        "Sets a circuit's temporary limit (a grid operator's dimming order), replacing any before it: the circuit carries min(configured, temporary) until `until`. Lowering applies within about a second; the stations' TxProfiles follow at once",
      security: control,
      parameters: CIRCUIT_PARAMETERS,
      requestBody: { required: true, content: { 'application/json': { schema: ref('TemporaryLimitRequest') } } },
      responses: {
        '200': json(ref('CircuitLimit'), "The circuit's limits, with the temporary limit just set"),
        '400': error(
          'Invalid path or body: `maxCurrentA` missing or not above 0, `until` missing, not an ISO 8601 date-time with an offset or not in the future, or a body that is not JSON; `problems` names each field',
        ),
        ...BEARER_ERRORS,
        '403': forbidden,
        '404': error('No such site, or no such circuit in it'),
        '413': error(`The body is over ${BODY_LIMIT_BYTES} bytes`),
        '415': error('The body is not application/json'),
      },
    },
    delete: {
      operationId: 'clearCircuitLimit',
      summary:
        "Ends a circuit's temporary limit now; the stations are raised again after loadManagement.raiseAfterS of stable headroom",
      security: control,
      parameters: CIRCUIT_PARAMETERS,
      responses: {
        '204': { description: 'The temporary limit ended' },
        ...BEARER_ERRORS,
        '403': forbidden,
        '404': error('No such site or circuit, or the circuit has no temporary limit in force (none set, or ended)'),
      },
    },
  };
}

/** Schemas of the API bodies as OpenAPI 3.0 components, generated from the zod schemas the routes validate with. */
function components(): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(apiSchemas, { target: 'openapi-3.0', uri: (id) => `#/components/schemas/${id}` });
  // OpenAPI 3.0 schema objects have no $id.
  return Object.fromEntries(Object.entries(schemas).map(([id, { $id: _id, ...schema }]) => [id, schema]));
}

/** The OpenAPI 3 description of the API (docs/partners/index.md#for-partners), for the configured issuer (= base URL). */
function openApiDocument(config: Config): Record<string, unknown> {
  const issuer = config.http.issuer;
  return {
    openapi: '3.0.3',
    info: {
      title: 'chargegate',
      version: '1',
      description:
        'Edge controller API: OAuth 2.0 client credentials token, JWKS, charge points and remote start/stop, stations and their operations, session history, event catch-up, circuits (load management) and their temporary limits, health and metrics.',
    },
    servers: [{ url: issuer }],
    components: {
      schemas: {
        ...components(),
        TokenRequest: {
          type: 'object',
          required: ['grant_type'],
          properties: {
            grant_type: { type: 'string', enum: ['client_credentials'] },
            client_id: { type: 'string', description: 'Required unless sent via HTTP Basic' },
            client_secret: { type: 'string', description: 'Required unless sent via HTTP Basic' },
            scope: {
              type: 'string',
              description: "Space-separated subset of the application's permissions: the token gets only these",
            },
          },
          description: "Without `scope` the token gets every permission of the application's groups.",
        },
        TokenResponse: {
          type: 'object',
          required: ['access_token', 'token_type', 'expires_in'],
          properties: {
            access_token: { type: 'string', description: 'JWT access token (RFC 9068, typ at+jwt, RS256)' },
            token_type: { type: 'string', enum: ['Bearer'] },
            expires_in: { type: 'integer', enum: [ACCESS_TOKEN_LIFETIME_S] },
            scope: { type: 'string', description: "The permissions of the application's groups, space-separated" },
          },
        },
        OAuthError: {
          type: 'object',
          required: ['error'],
          properties: { error: { type: 'string', enum: OAUTH_ERROR_CODES }, error_description: { type: 'string' } },
        },
        Jwks: {
          type: 'object',
          required: ['keys'],
          properties: {
            keys: {
              type: 'array',
              items: {
                type: 'object',
                required: ['kty', 'kid', 'alg', 'use'],
                properties: {
                  kty: { type: 'string' },
                  kid: { type: 'string' },
                  alg: { type: 'string' },
                  use: { type: 'string', enum: ['sig'] },
                  n: { type: 'string' },
                  e: { type: 'string' },
                },
              },
            },
          },
        },
      },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: `Access token from POST ${issuer}/oauth2/token`,
        },
        clientBasic: {
          type: 'http',
          scheme: 'basic',
          description: 'client_id and client_secret, each form-urlencoded (RFC 6749 2.3.1)',
        },
        oauth2: {
          type: 'oauth2',
          flows: { clientCredentials: { tokenUrl: `${issuer}/oauth2/token`, scopes: PERMISSION_DESCRIPTIONS } },
        },
      },
    },
    paths: {
      '/oauth2/token': {
        post: {
          operationId: 'getToken',
          summary: 'Client credentials grant',
          security: [{}, { clientBasic: [] }],
          requestBody: {
            required: true,
            content: { 'application/x-www-form-urlencoded': { schema: ref('TokenRequest') } },
          },
          responses: {
            '200': json(ref('TokenResponse'), 'Access token; Cache-Control: no-store'),
            '400': json(
              ref('OAuthError'),
              `invalid_request (also for a body over ${BODY_LIMIT_BYTES} bytes), unsupported_grant_type, or invalid_scope (a scope beyond the application's permissions)`,
            ),
            '401': json(ref('OAuthError'), 'invalid_client (WWW-Authenticate: Basic when Basic was used)'),
            default: json(ref('OAuthError'), '`server_error`: an internal failure; the gateway log has the details'),
          },
        },
      },
      '/.well-known/jwks.json': {
        get: {
          operationId: 'getJwks',
          summary:
            'Public signing keys, each under its own stable kid; the current webhook key also as kid "sign" (the documented profile)',
          security: [],
          responses: { '200': json(ref('Jwks'), 'JWKS') },
        },
      },
      '/.well-known/oauth-authorization-server': {
        get: {
          operationId: 'getAuthorizationServerMetadata',
          summary: 'RFC 8414 metadata: token endpoint, JWKS URI, supported client authentication methods',
          security: [],
          responses: {
            '200': json(
              { type: 'object', required: ['issuer', 'token_endpoint', 'jwks_uri'], additionalProperties: true },
              'Metadata',
            ),
          },
        },
      },
      '/charge-points': {
        get: {
          operationId: 'listChargePoints',
          summary: "The charge points the application's groups reach",
          security: [{ bearer: [] }, { oauth2: ['charge-points:read'] }],
          responses: { '200': json(ref('ChargePointList'), 'Charge points'), ...BEARER_ERRORS },
        },
      },
      '/charge-points/{chargePointId}': {
        get: {
          operationId: 'getChargePoint',
          summary: 'One charge point, as the list shows it',
          security: [{ bearer: [] }, { oauth2: ['charge-points:read'] }],
          parameters: [{ name: 'chargePointId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': json(ref('ChargePoint'), 'The charge point'),
            ...BEARER_ERRORS,
            '404': error('No such charge point'),
          },
        },
      },
      '/transactions': {
        get: {
          operationId: 'listTransactions',
          summary:
            "Session history of the charge points the application's groups reach, oldest first (kept store.retainStoppedTransactionsDays)",
          security: [{ bearer: [] }, { oauth2: ['charge-points:read'] }],
          parameters: [
            {
              name: 'from',
              in: 'query',
              schema: { type: 'string', format: 'date-time' },
              description: 'Started at or after this instant',
            },
            {
              name: 'to',
              in: 'query',
              schema: { type: 'string', format: 'date-time' },
              description: 'Started before this instant',
            },
            { name: 'status', in: 'query', schema: { type: 'string', enum: ['open', 'stopped'] } },
            {
              name: 'after',
              in: 'query',
              schema: { type: 'integer', minimum: 0 },
              description: 'Only larger transactionIds: pass the last one you got for the next page',
            },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: TRANSACTIONS_MAX_LIMIT, default: 1000 },
            },
          ],
          responses: {
            '200': json(ref('TransactionList'), 'Transactions'),
            '400': error('A query parameter is invalid'),
            ...BEARER_ERRORS,
          },
        },
      },
      '/transactions/{transactionId}': {
        get: {
          operationId: 'getTransaction',
          summary:
            'One transaction with its register readings and every signed meter reading kept for it, as received (docs/partners/signed-meter-values.md#signed-meter-values)',
          security: [{ bearer: [] }, { oauth2: ['charge-points:read'] }],
          parameters: [{ name: 'transactionId', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
          responses: {
            '200': json(ref('TransactionDetail'), 'The transaction'),
            '400': error('The transactionId is not a positive integer'),
            ...BEARER_ERRORS,
            '404': error("No such transaction, or one outside the application's groups"),
          },
        },
      },
      '/events': {
        get: {
          operationId: 'listEvents',
          summary:
            "The site events in commit order from a cursor, as webhooks carry them: catch up after an outage without a replay (events are kept webhookDelivery.retainDeliveredDays after delivery). Only events of charge points the application's groups reach.",
          security: [{ bearer: [] }, { oauth2: ['events:read'] }],
          parameters: [
            {
              name: 'after',
              in: 'query',
              schema: { type: 'string', pattern: '^[0-9]*$' },
              description: 'A cursor from an earlier answer; empty or absent: the oldest event kept',
            },
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: 1, maximum: EVENTS_MAX_LIMIT, default: 100 },
            },
          ],
          responses: {
            '200': json(ref('EventPage'), 'Events and the cursor to continue from'),
            '400': error('A query parameter is invalid'),
            ...BEARER_ERRORS,
          },
        },
      },
      '/sites/{siteId}/circuits': {
        get: {
          operationId: 'getSiteCircuits',
          summary:
            "Load management on a site: each circuit's limit, measured and other load, headroom, and each managed connector's state and allowance (an empty list when the site has no circuits)",
          security: [{ bearer: [] }, { oauth2: ['charge-points:read'] }],
          parameters: [{ name: 'siteId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: {
            '200': json(ref('SiteCircuits'), "Circuits and managed connectors, as of the controller's last step"),
            ...BEARER_ERRORS,
            '403': error(
              'The application lacks the permission, or its groups do not reach the whole site (a company or site scope)',
            ),
            '404': error('No such site'),
          },
        },
      },
      '/charge-points/{chargePointId}/start': commandOperation(
        'startTransaction',
        'RemoteStartTransaction on a connector',
        'StartRequest',
      ),
      '/charge-points/{chargePointId}/stop': commandOperation(
        'stopTransaction',
        'RemoteStopTransaction of a transaction',
        'StopRequest',
      ),
      '/sites/{siteId}/circuits/{circuitId}/limit': circuitLimitOperations(),
      ...stationPaths({ ref, json, error, bearerErrors: BEARER_ERRORS }),
      ...firmwarePaths({ ref, json, error, bearerErrors: BEARER_ERRORS }),
      '/health': {
        get: {
          operationId: 'getHealth',
          summary: 'Overall status (ok, warning, critical) and per-part reports such as the webhook executors',
          security: [],
          responses: {
            '200': json(
              {
                type: 'object',
                required: ['status'],
                properties: { status: { type: 'string', enum: ['ok', 'warning'] } },
                additionalProperties: true,
              },
              'Health: ok or warning',
            ),
            '503': json(
              {
                type: 'object',
                required: ['status'],
                properties: { status: { type: 'string', enum: ['critical'] } },
                additionalProperties: true,
              },
              'Health: critical',
            ),
          },
        },
      },
      '/metrics': {
        get: {
          operationId: 'getMetrics',
          summary: 'Prometheus metrics',
          security: [],
          responses: {
            '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } },
          },
        },
      },
      '/openapi.json': {
        get: {
          operationId: 'getOpenApi',
          summary: 'This document',
          security: [],
          responses: { '200': json({ type: 'object' }, 'OpenAPI 3 document') },
        },
      },
    },
  };
}

export function openApiRoutes(config: () => Config): FastifyPluginAsync {
  return async (app) => {
    app.get('/openapi.json', async () => openApiDocument(config()));
  };
}
