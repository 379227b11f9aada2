import { fstatSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';

export type { Logger };

/** Keys that may carry secrets in a log object or a child logger's bindings: their values are replaced. */
const REDACTED: ReadonlySet<string> = new Set([
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
]);
const CENSOR = '[redacted]';
/** A secret key is looked for at the top of a line and this many levels below it. */
const REDACT_DEPTH = 2;

/**
 * The object with the value of every REDACTED key within REDACT_DEPTH levels replaced; the object itself when it has
 * none (nearly every line). Copies only the path to a secret: the caller's objects are never changed. pino's own
 * `redact` with wildcard paths (`*.token`, `*.*.token`) ran a path walker over every field of every line and cost the
 * daemon's main thread about 5 % of its time under station load (issue 47).
 */
function redacted<T>(value: T, depth = 0): T {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  let copy: Record<string, unknown> | undefined;
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    const field = source[key];
    const replaced = REDACTED.has(key) ? CENSOR : depth < REDACT_DEPTH ? redacted(field, depth + 1) : field;
    if (replaced === field) continue;
    copy ??= copyOf(source);
    copy[key] = replaced;
  }
  return (copy ?? value) as T;
}

/** A shallow copy that logs as the original: an array stays one, an error keeps its class, message and stack. */
function copyOf(source: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(source)) return [...(source as unknown[])] as unknown as Record<string, unknown>;
  if (source instanceof Error)
    return Object.assign(Object.create(Object.getPrototypeOf(source) as object) as Record<string, unknown>, source, {
      message: source.message,
      stack: source.stack,
    });
  return { ...source };
}

/** The destination each logger createLogger made writes to, kept for lineWriter (pino has no public getter). */
const destinations = new WeakMap<Logger, pino.DestinationStream>();

/** To stdout by default (see stdoutDestination), or to the given destination (a worker thread's, a test's). */
export function createLogger(level = 'info', destination: pino.DestinationStream = stdoutDestination()): Logger {
  const logger = pino(
    {
      level,
      base: { service: 'chargegate' },
      // A child logger's bindings are not the log formatter's: pino's own redaction covers them, at their top, and costs
      // nothing for any other key (a wildcard path would run on every field of every line).
      redact: { paths: [...REDACTED], censor: CENSOR },
      formatters: { log: redacted },
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
