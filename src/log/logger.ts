import { pino, type Logger } from 'pino';

export type { Logger };

/** Keys that may carry secrets anywhere in a log object; pino replaces their values. */
const REDACTED = ['password', 'clientSecret', 'client_secret', 'secret', 'token', 'accessToken', 'access_token', 'authorization', 'passphrase', 'privateKey'];

/** JSON lines to stdout, which journald collects under systemd. */
export function createLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  const paths = REDACTED.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]);
  return pino({ level, base: { service: 'chargegate' }, redact: { paths, censor: '[redacted]' }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}

/**
 * Writes lines another pino logger (on a worker thread) has already formatted to this logger's destination, so
 * every thread's lines reach the same stdout or test stream, in the same format.
 */
export function lineWriter(logger: Logger): (line: string) => void {
  const stream = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  if (!stream) throw new Error('logger has no destination stream');
  return (line) => stream.write(line);
}
