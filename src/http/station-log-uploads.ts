import { Busboy } from '@fastify/busboy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PassThrough, type Readable } from 'node:stream';
import { UploadTooLargeError, type StoredLog, type UploadClaim, type UploadReception } from '../station-logs/index.js';
import { ApiError } from './http-errors.js';

/** What a multipart upload may hold besides its one file: a few small fields some stations add. */
const MULTIPART_LIMITS = { files: 1, fields: 16, fieldSize: 1024, parts: 32, headerPairs: 32 };

/**
 * The HTTP upload locations (contract 11.3): PUT or POST to `/uploads/{token}/{name}` (or `/uploads/{token}`), the
 * body raw or multipart/form-data with one file part. Registered as a plugin of its own so that its content-type
 * parser, which hands the body over as a stream unread, serves these routes only: the file goes to disk as it comes,
 * never whole into memory. A wrong, used or expired token is 404 (section 6's JSON error) before a byte is written.
 */
export function uploadRoutes(reception: UploadReception): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    // Before the listener waits for the requests in flight to end: an upload could take until its window ends.
    app.addHook('preClose', (done) => {
      reception.cutAll();
      done();
    });
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      const { token, '*': rest } = request.params as { token: string; '*'?: string };
      const grant = reception.grants.usableToken(token);
      // The rest of an unread body is not worth reading: the connection closes after the answer.
      void reply.header('connection', 'close');
      // Claimed for the whole request, before its first byte: concurrent requests on one token get 404.
      const claim = grant && reception.claim(grant);
      if (!claim) throw new ApiError(404, 'not_found', 'no upload location here: the token is wrong, used or expired');
      const max = reception.maxUploadBytes;
      try {
        if (Number(request.headers['content-length'] ?? 0) > max) throw tooLarge(max);
        const multipart = /^multipart\/form-data/i.test(request.headers['content-type'] ?? '');
        const stored = multipart
          ? await receiveMultipart(reception, claim, request)
          : await reception.receive(claim, rest ?? '', detached(request), 'http');
        return reply.status(201).send({ name: stored.name, bytes: stored.bytes });
      } catch (err) {
        if (err instanceof UploadTooLargeError) throw tooLarge(max);
        if (err instanceof ApiError) throw err;
        // Cut (the window ended) or broken off: nobody is left to answer.
        request.raw.destroy();
        return reply.hijack();
      } finally {
        claim.release();
      }
    };
    for (const url of ['/uploads/:token', '/uploads/:token/*'])
      app.route({ method: ['PUT', 'POST'], url, handler, bodyLimit: Number.MAX_SAFE_INTEGER });
  };
}

function tooLarge(max: number): ApiError {
  return new ApiError(413, 'payload_too_large', `upload over logs.maxUploadBytes (${max} bytes): nothing kept`);
}

/**
 * The request body behind a stream of its own: when the file is refused, that stream is destroyed and the request is
 * left alone, so the 413 can still be answered.
 */
function detached(request: FastifyRequest): Readable {
  const body = new PassThrough();
  request.raw.pipe(body);
  body.once('close', () => request.raw.unpipe(body));
  return body;
}

/** The one file part of a multipart/form-data body (its field name is the station's choice). */
function receiveMultipart(reception: UploadReception, claim: UploadClaim, request: FastifyRequest): Promise<StoredLog> {
  return new Promise<StoredLog>((resolve, reject) => {
    let parser: InstanceType<typeof Busboy>;
    try {
      parser = new Busboy({
        headers: request.headers as { 'content-type': string },
        limits: { ...MULTIPART_LIMITS, fileSize: reception.maxUploadBytes + 1 },
      });
    } catch {
      reject(new ApiError(400, 'invalid_request', 'multipart/form-data without a boundary'));
      return;
    }
    // Cut with the window too: a body that stalls outside its file part (before it, or before the closing boundary).
    claim.track(parser);
    let file: Promise<StoredLog> | undefined;
    let fileStream: Readable | undefined;
    parser.on('file', (_field, stream, filename) => {
      if (file) return stream.resume();
      fileStream = stream;
      file = reception.receive(claim, filename, stream, 'http');
      // A refused file is answered at once; what the body still holds is not read.
      file.catch((err: unknown) => {
        request.raw.unpipe(parser);
        reject(err);
      });
    });
    parser.on('error', (cause) => {
      const err = cause instanceof Error ? cause : new Error(String(cause));
      // A file under way ends with the body, its partial removed before the request is answered or closed.
      fileStream?.destroy(err);
      const settled = (): void => reject(err);
      if (file) file.then(settled, settled);
      else settled();
    });
    parser.on('finish', () => {
      if (file) file.then(resolve, reject);
      else reject(new ApiError(400, 'invalid_request', 'multipart/form-data without a file part'));
    });
    request.raw.pipe(parser);
  });
}
