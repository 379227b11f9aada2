import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorCodeOf, type ErrorCode } from '../errors/index.js';

/**
 * The `error` codes of every JSON endpoint but the token endpoint (which speaks RFC 6749 section 5.2), published
 * as the OpenAPI Error schema's enum.
 */
export const API_ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'invalid_token',
  'insufficient_scope',
  'forbidden',
  'not_found',
  'rejected',
  'transaction_stopped',
  'payload_too_large',
  'unsupported_media_type',
  'not_remotely_controllable',
  'server_error',
  'station_error',
  'station_offline',
  'station_timeout',
  'station_refused',
  'station_busy',
  'no_base_report',
  'range_not_satisfiable',
  'conflict',
  'logs_in_progress',
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/**
 * A request answered with an error on purpose: status, a machine-readable `error`, a human `message`, headers and extra
 * body fields.
 */
export class HttpError<Code extends string = string> extends Error {
  constructor(
    readonly statusCode: number,
    readonly error: Code,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export class ApiError extends HttpError<ApiErrorCode> {
  override name = 'ApiError';
}

/**
 * How one surface words its errors: its log line, its body, and its vocabulary for refusals it did not raise itself.
 */
export interface ErrorSurface {
  /** Logs say `<name> request refused` / `<name> request failed`. */
  name: string;
  /** Refusals are expected traffic; a surface where they hint at an attack logs them as warnings. */
  refusalLevel: 'info' | 'warn';
  /** A refusal in this surface's own codes (e.g. Fastify's body-too-large as an OAuth invalid_request). */
  translate?(refusal: HttpError): HttpError;
  body(error: HttpError): Record<string, unknown>;
}

/** Everything but the token endpoint: `{error, message, ...details}`. */
export const API_ERRORS: ErrorSurface = {
  name: 'api',
  refusalLevel: 'info',
  body: (error) => ({ error: error.error, message: error.message, ...error.details }),
};

const INTERNAL_ERROR = new ApiError(500, 'server_error', 'internal error');

/**
 * The one error path of the HTTP listener: refusals raised by the routes, Fastify's own refusals of a request
 * (its FST_ERR_* codes are internal names, not part of the API) and internal failures (500 without internals),
 * each logged once and answered as JSON in the surface's shape.
 */
export function jsonErrorHandler(surface: ErrorSurface) {
  return (err: FastifyError | HttpError, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const raised = err instanceof HttpError ? err : (chargegateRefusal(err) ?? fastifyRefusal(err, request));
    if (!raised) {
      request.log.error({ err, method: request.method, url: request.url }, `${surface.name} request failed`);
      return reply.status(INTERNAL_ERROR.statusCode).send(surface.body(INTERNAL_ERROR));
    }
    const refusal = surface.translate?.(raised) ?? raised;
    request.log[surface.refusalLevel](
      {
        status: refusal.statusCode,
        error: refusal.error,
        reason: refusal.message,
        method: request.method,
        url: request.url,
        address: request.ip,
      },
      `${surface.name} request refused`,
    );
    return reply.headers(refusal.headers).status(refusal.statusCode).send(surface.body(refusal));
  };
}

/**
 * chargegate's own errors a route lets through, by their stable code: a station's failures and the remote start and
 * stop's refusals as the API's status codes (docs/partners/index.md#for-partners).
 */
const STATION_REFUSALS: Partial<Record<ErrorCode, [status: number, error: ApiErrorCode]>> = {
  CHARGEGATE_STATION_OFFLINE: [503, 'station_offline'],
  CHARGEGATE_STATION_TIMEOUT: [504, 'station_timeout'],
  CHARGEGATE_STATION_CALL: [502, 'station_error'],
  CHARGEGATE_TRANSACTION_STOPPED: [409, 'transaction_stopped'],
  CHARGEGATE_UNKNOWN_CONNECTOR: [400, 'invalid_request'],
  CHARGEGATE_STATION_BUSY: [429, 'station_busy'],
  CHARGEGATE_INVALID_OPERATION: [400, 'invalid_request'],
  CHARGEGATE_NO_BASE_REPORT: [409, 'no_base_report'],
  CHARGEGATE_LOGS_IN_PROGRESS: [409, 'logs_in_progress'],
};

function chargegateRefusal(err: Error & { ocppErrorCode?: string }): ApiError | undefined {
  const code = errorCodeOf(err);
  const refusal = code === undefined ? undefined : STATION_REFUSALS[code];
  if (!refusal) return undefined;
  return new ApiError(
    refusal[0],
    refusal[1],
    err.message,
    {},
    err.ocppErrorCode === undefined ? {} : { ocppErrorCode: err.ocppErrorCode },
  );
}

/**
 * Fastify's refusals before a handler runs (unreadable body, unsupported media type, body too large, bad URL) as API
 * errors.
 */
function fastifyRefusal(err: FastifyError, request: FastifyRequest): ApiError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        415,
        'unsupported_media_type',
        `content-type "${request.headers['content-type'] ?? '(none)'}" is not supported; send application/json`,
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', `request body over ${request.routeOptions.bodyLimit} bytes`);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError(400, 'invalid_request', 'body: not valid JSON');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'invalid_request', 'body: empty, but content-type says application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'invalid_request', 'body: size does not match Content-Length');
    case 'FST_ERR_BAD_URL':
      return new ApiError(400, 'invalid_request', 'path: not a valid URL');
  }
  // Any other client error a library raised: keep its status, never its internal code.
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return new ApiError(err.statusCode, err.statusCode === 404 ? 'not_found' : 'invalid_request', err.message);
  }
  return undefined;
}
