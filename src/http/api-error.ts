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
 * Error handler for API routes: ApiError with its headers, schema validation as 400 `invalid_request`; anything
 * else goes on to the server's handler (500 without internals).
 */
export function apiErrorHandler(err: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err instanceof ApiError) {
    request.log.info({ status: err.statusCode, error: err.error, reason: err.message, url: request.url }, 'api request refused');
    return reply
      .headers(err.headers)
      .status(err.statusCode)
      .send({ error: err.error, message: err.message, ...err.details });
  }
  if (err.validation) {
    request.log.info({ reason: err.message, url: request.url }, 'api request invalid');
    return reply.status(400).send({ error: 'invalid_request', message: err.message });
  }
  throw err;
}
