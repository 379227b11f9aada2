import { ChargegateError } from '../errors/index.js';

/** A listener the config names could not open its address: one line naming it and the key to change. */
export class ListenError extends ChargegateError {
  override name = 'ListenError';
  readonly code = 'CHARGEGATE_LISTEN';
}

/**
 * A failed listen() of the listener configured under `section` (`http` or `ocpp`) as a ListenError; other errors as
 * they are.
 */
export function listenFailure(err: unknown, section: 'http' | 'ocpp'): unknown {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (e?.syscall !== 'listen') return err;
  const where = `${e.address ?? '?'}:${e.port ?? '?'}`;
  const because: Record<string, string> = {
    EADDRINUSE: `the port is in use. Is chargegate already running? Otherwise free the port or change ${section}.port`,
    EACCES: `permission denied (ports below 1024 need privileges): change ${section}.port`,
    EADDRNOTAVAIL: `this machine has no such address: change ${section}.host`,
  };
  const reason = e.code === undefined ? undefined : because[e.code];
  return reason ? new ListenError(`cannot listen on ${where}: ${reason}`, { cause: err }) : err;
}
