import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** One request exactly as it arrived: raw header names and order, raw body bytes. */
export interface ReceivedRequest {
  index: number;
  method: string;
  /** The request target as sent, e.g. /webhook/events?x=1. */
  url: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** [name, value] pairs in arrival order with the sender's spelling. */
  rawHeaders: Array<[string, string]>;
  body: Buffer;
  receivedAt: number;
  /** Set when the client dropped the connection before the answer was complete (an aborted request). */
  abortedAt?: number;
  text(): string;
  json<T = Record<string, unknown>>(): T;
}

/** How the receiver answers one request. */
export type Answer =
  | { kind?: 'reply'; status?: number; body?: string; headers?: Record<string, string>; delayMs?: number }
  /** Reads the request, never answers. */
  | { kind: 'hang' }
  /** Destroys the connection without an answer. */
  | { kind: 'reset' }
  | { kind: 'redirect'; location: string; status?: 301 | 302 | 303 | 307 | 308 }
  /** A 2xx (or `status`) streaming `bytes` of body as fast as the client reads. */
  | { kind: 'huge'; bytes: number; status?: number }
  /** Sends the status line, headers and a few body bytes, then nothing more. */
  | { kind: 'stall'; status?: number };

export type Responder = (request: ReceivedRequest) => Answer | Promise<Answer>;

export interface Receiver {
  port: number;
  origin: string;
  url(path?: string): string;
  requests: ReceivedRequest[];
  /** Bytes of huge bodies actually written before the client went away. */
  hugeBytesWritten: number;
  answer(responder: Responder | Answer): void;
  /** Resolves once predicate(requests) holds; rejects after timeoutMs with what arrived so far. */
  waitFor(predicate: (requests: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  waitForCount(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real HTTP/1.1 webhook receiver on loopback for tests, the demo and the benchmarks. It records every
 * request raw and answers as told: a status with a delay, a hang, a reset, a redirect, or a huge body.
 */
export async function startReceiver(
  answer: Responder | Answer = { status: 200 },
  options: { host?: string; port?: number } = {},
): Promise<Receiver> {
  let responder: Responder = toResponder(answer);
  const requests: ReceivedRequest[] = [];
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let hugeBytesWritten = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const rawHeaders: Array<[string, string]> = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) rawHeaders.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
      const received: ReceivedRequest = {
        index: requests.length,
        method: req.method ?? '',
        url: req.url ?? '',
        path: new URL(req.url ?? '/', 'http://receiver').pathname,
        headers: req.headers,
        rawHeaders,
        body,
        receivedAt: Date.now(),
        text: () => body.toString('utf8'),
        json: <T>() => JSON.parse(body.toString('utf8')) as T,
      };
      res.on('close', () => {
        if (!res.writableFinished) {
          received.abortedAt = Date.now();
          events.emit('request');
        }
      });
      requests.push(received);
      events.emit('request');
      Promise.resolve(responder(received))
        .then((answer) => respond(req, res, answer))
        .catch(() => res.destroy());
    });
  });

  function respond(req: IncomingMessage, res: ServerResponse, answer: Answer): void {
    switch (answer.kind) {
      case 'hang':
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'redirect':
        res.writeHead(answer.status ?? 302, { Location: answer.location, 'Content-Length': '0' }).end();
        return;
      case 'stall':
        res.writeHead(answer.status ?? 200, { 'Content-Type': 'text/plain', 'Content-Length': '1000' });
        res.write('partial');
        return;
      case 'huge': {
        res.writeHead(answer.status ?? 200, {
          'Content-Type': 'application/octet-stream',
          'Content-Length': String(answer.bytes),
        });
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let left = answer.bytes;
        const pump = () => {
          while (left > 0 && !res.destroyed) {
            const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
            left -= piece.length;
            hugeBytesWritten += piece.length;
            if (!res.write(piece)) return void res.once('drain', pump);
          }
          if (left === 0) res.end();
        };
        res.on('close', () => (left = 0));
        pump();
        return;
      }
      case undefined:
      case 'reply': {
        const send = () => {
          if (res.destroyed) return;
          const body = answer.body ?? '';
          res
            .writeHead(answer.status ?? 200, {
              'Content-Type': 'text/plain',
              'Content-Length': String(Buffer.byteLength(body)),
              ...answer.headers,
            })
            .end(body);
        };
        // No delay asked: answer now. Even a 0 ms timer waits a millisecond, which the bench's sequential baseline
        // would pay per event.
        if (!answer.delayMs) return send();
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, answer.delayMs);
        timers.add(timer);
      }
    }
  }

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const origin = `http://${options.host ?? '127.0.0.1'}:${port}`;

  const receiver: Receiver = {
    port,
    origin,
    url: (path = '/webhook/events') => `${origin}${path}`,
    requests,
    get hugeBytesWritten() {
      return hugeBytesWritten;
    },
    answer(next) {
      responder = toResponder(next);
    },
    waitFor(predicate, timeoutMs = 20_000) {
      if (predicate(requests)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(requests)) return;
          clearTimeout(timer);
          events.off('request', check);
          resolve();
        };
        const timer = setTimeout(() => {
          events.off('request', check);
          reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${requests.length} requests so far)`));
        }, timeoutMs);
        events.on('request', check);
      });
    },
    waitForCount(count, timeoutMs) {
      return receiver.waitFor((r) => r.length >= count, timeoutMs);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

function toResponder(answer: Responder | Answer): Responder {
  return typeof answer === 'function' ? answer : () => answer;
}
