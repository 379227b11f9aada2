import type { FastifyRequest } from 'fastify';
import {
  grantsOf,
  InvalidAccessTokenError,
  type AccessTokenClaims,
  type AccessTokenVerifier,
  type Applications,
  type Grant,
} from '../applications/index.js';
import type { Config, Permission } from '../config/index.js';
import { ApiError } from './http-errors.js';

/** The application behind a verified request, with what its groups grant right now. */
export interface Caller {
  clientId: string;
  claims: AccessTokenClaims;
  grants: Grant[];
}

const REALM = 'chargegate';

/**
 * RFC 6750 bearer authentication, verified locally on every request: the token's signature and claims, then the
 * application in the database (a revoked application fails at once), then the permission. 401 with a
 * `WWW-Authenticate: Bearer` challenge when the token is not acceptable; 403 `insufficient_scope` otherwise.
 */
export class BearerAuth {
  constructor(
    private readonly options: { verifier: AccessTokenVerifier; applications: Applications; config: () => Config },
  ) {}

  async authenticate(request: FastifyRequest, permission: Permission): Promise<Caller> {
    const caller = await this.identify(request);
    if (!mayUse(caller, permission)) throw insufficientScope(permission);
    return caller;
  }

  /** The verified caller, whatever it may do: 401 when the token is not acceptable. */
  async identify(request: FastifyRequest): Promise<Caller> {
    const header = request.headers.authorization;
    if (!header || !/^bearer( |$)/i.test(header)) throw unauthorized(undefined, 'missing bearer token');
    const token = /^bearer[ ]+([A-Za-z0-9\-._~+/]+=*)[ ]*$/i.exec(header)?.[1];
    if (!token) throw unauthorized('invalid_token', 'token malformed');
    let claims: AccessTokenClaims;
    try {
      claims = await this.options.verifier.verify(token);
    } catch (err) {
      if (err instanceof InvalidAccessTokenError) throw unauthorized('invalid_token', err.message);
      throw err;
    }
    const application = this.options.applications.active(claims.client_id);
    if (!application) throw unauthorized('invalid_token', 'application revoked or unknown');
    return { clientId: application.clientId, claims, grants: grantsOf(this.options.config(), application.groupIds) };
  }
}

/** The token's scope bounds what a caller may do; the groups as configured now say where. */
export function mayUse(caller: Caller, permission: Permission): boolean {
  return caller.claims.scope.split(' ').includes(permission) && caller.grants.some((g) => g.permission === permission);
}

/** 403 insufficient_scope with its Bearer challenge (RFC 6750 section 3.1). */
export function insufficientScope(permission: Permission): ApiError {
  return new ApiError(403, 'insufficient_scope', `the application lacks the ${permission} permission`, {
    'www-authenticate': challenge('insufficient_scope', `requires ${permission}`, permission),
  });
}

/** A 401 carrying the Bearer challenge; without a token there is no error code (RFC 6750 section 3.1). */
function unauthorized(error: 'invalid_token' | undefined, description: string): ApiError {
  return new ApiError(401, error ?? 'unauthorized', description, {
    'www-authenticate': challenge(error, error ? description : undefined),
  });
}

function challenge(error: string | undefined, description: string | undefined, scope?: string): string {
  const params = [`realm="${REALM}"`];
  if (error) params.push(`error="${error}"`);
  if (description) params.push(`error_description="${description.replace(/["\\]/g, '')}"`);
  if (scope) params.push(`scope="${scope}"`);
  return `Bearer ${params.join(', ')}`;
}
