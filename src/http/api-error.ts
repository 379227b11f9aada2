import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

/** An API answer other than success: status, a machine-readable `error`, a human `message`, and headers to send. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly error: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * Error handler for API routes: ApiError with its headers, fastify's request refusals with an API error code;
 * anything else goes on to the server's handler (500 without internals).
 */
export function apiErrorHandler(err: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err instanceof ApiError) {
    request.log.info({ status: err.statusCode, error: err.error, reason: err.message, url: request.url }, 'api request refused');
    return reply
      .headers(err.headers)
      .status(err.statusCode)
      .send({ error: err.error, message: err.message, ...err.details });
  }
  // Fastify's own refusals before a handler runs: unparseable JSON, unsupported media type, body too large.
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    request.log.info({ status: err.statusCode, reason: err.message, url: request.url }, 'api request invalid');
    const error = err.statusCode === 415 ? 'unsupported_media_type' : err.statusCode === 413 ? 'payload_too_large' : 'invalid_request';
    return reply.status(err.statusCode).send({ error, message: err.message });
  }
  throw err;
}
