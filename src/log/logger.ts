import { fstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';

export type { Logger };

/** Keys that may carry secrets anywhere in a log object; pino replaces their values. */
const REDACTED = [
  'password',
  'clientSecret',
  'client_secret',
  'secret',
  'token',
  'accessToken',
  'access_token',
  'authorization',
  'passphrase',
  'privateKey',
];

/** The destination each logger createLogger made writes to, kept for lineWriter (pino has no public getter). */
const destinations = new WeakMap<Logger, pino.DestinationStream>();

/** To stdout by default (see stdoutDestination), or to the given destination (a worker thread's, a test's). */
export function createLogger(level = 'info', destination: pino.DestinationStream = stdoutDestination()): Logger {
  const paths = REDACTED.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]);
  const logger = pino(
    {
      level,
      base: { service: 'chargegate' },
      redact: { paths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
  destinations.set(logger, destination);
  return logger;
}

/**
 * Human-readable lines on a terminal (an installer running `chargegate run` by hand); under systemd JSON lines
 * that each start with their syslog priority (`<4>` for a warning), which journald reads so `journalctl -p
 * warning` works; plain JSON lines in pipes and files.
 */
function stdoutDestination(): pino.DestinationStream {
  if (process.stdout.isTTY) {
    // Loaded only here: a gateway's daemon never pays for it.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
    return pretty.build({
      colorize: true,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,service',
    });
  }
  const stdout = pino.destination(1);
  return stdoutIsJournal() ? withSyslogPriority(stdout) : stdout;
}

/** systemd sets JOURNAL_STREAM to the device and inode of the journal stream it gave the process as stdout. */
function stdoutIsJournal(): boolean {
  const [device, inode] = (process.env.JOURNAL_STREAM ?? '').split(':');
  if (!device || !inode) return false;
  try {
    const stat = fstatSync(1);
    return String(stat.dev) === device && String(stat.ino) === inode;
  } catch {
    return false;
  }
}

/** pino's levels as syslog priorities: trace and debug 7, info 6, warn 4, error 3, fatal 2. */
const SYSLOG_PRIORITY: Record<string, number> = { '10': 7, '20': 7, '30': 6, '40': 4, '50': 3, '60': 2 };

function withSyslogPriority(stream: pino.DestinationStream): pino.DestinationStream {
  return {
    write(line: string) {
      // pino writes the level first: {"level":40,...
      const priority = SYSLOG_PRIORITY[line.slice(9, 11)] ?? 6;
      stream.write(`<${priority}>${line}`);
    },
  };
}

/**
 * Writes lines another pino logger (on a worker thread) has already formatted to the destination of a logger
 * createLogger made (not a child of it), so every thread's lines reach the same stdout or test stream, in the
 * same format.
 */
export function lineWriter(logger: Logger): (line: string) => void {
  const stream = destinations.get(logger);
  if (!stream) throw new Error('lineWriter needs a logger made by createLogger, not a child of one');
  return (line) => stream.write(line);
}
