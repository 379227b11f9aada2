import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/log/index.js';

/** A destination for pino that keeps every JSON line it is given, parsed, in `lines`. */
export function logSink(): { sink: Writable; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { sink, lines };
}

/** A real pino logger (chargegate's createLogger) whose lines land in `lines`. */
export function capturedLogger(level = 'info'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const { sink, lines } = logSink();
  return { logger: createLogger(level, sink), lines };
}
