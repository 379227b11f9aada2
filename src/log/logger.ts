import { pino, type Logger } from 'pino';

export type { Logger };

/** Keys that may carry secrets anywhere in a log object; pino replaces their values. */
const REDACTED = ['password', 'clientSecret', 'client_secret', 'secret', 'token', 'accessToken', 'access_token', 'authorization', 'passphrase', 'privateKey'];

/** JSON lines to stdout, which journald collects under systemd. */
export function createLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  const paths = REDACTED.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]);
  return pino({ level, base: { service: 'chargegate' }, redact: { paths, censor: '[redacted]' }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}
