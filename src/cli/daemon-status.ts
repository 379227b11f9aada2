import { isWildcardHost, type Config } from '../config/index.js';
import type { StatusSnapshot } from '../status-page/index.js';
import { dataDirHolder } from '../store/index.js';

/** The running daemon's status.json, or why there is none, in words for the installer. */
export type DaemonStatus = { snapshot: StatusSnapshot } | { unavailable: string };

const STATUS_TIMEOUT_MS = 2000;

/**
 * What the running daemon sees now, from its status.json on the HTTP listener: it keeps readings, counters and the
 * load controller's state in memory (writing them would wear the flash for nothing). The daemon is found through the
 * data directory it holds, whose holder file names its HTTP port also when the config says port 0.
 */
export async function daemonStatus(config: Config): Promise<DaemonStatus> {
  const daemon = dataDirHolder(config.dataDir);
  if (!daemon) return { unavailable: `no chargegate is running on ${config.dataDir}` };
  if (!daemon.httpPort)
    return { unavailable: `the chargegate on ${config.dataDir} (pid ${daemon.pid}) is not listening yet` };
  // Its certificate names the address partners use, and may be self-signed: nothing here to check it against.
  if (config.http.tls)
    return {
      unavailable: 'with http.tls the daemon serves status.json over HTTPS only, which this command does not read',
    };
  const host = isWildcardHost(config.http.host) ? '127.0.0.1' : config.http.host.replace(/^\[(.*)\]$/, '$1');
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${daemon.httpPort}/status.json`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(STATUS_TIMEOUT_MS) });
  } catch (err) {
    const why = err instanceof Error && err.name === 'TimeoutError' ? `no answer within ${STATUS_TIMEOUT_MS} ms` : err;
    return {
      unavailable: `the chargegate on ${config.dataDir} (pid ${daemon.pid}) does not answer at ${url}: ${describe(why)}`,
    };
  }
  if (response.status === 401 || response.status === 403)
    return {
      unavailable: `${url} answers ${response.status}: on a listener that is not loopback status.json needs a status:read token, unless http.publicStatus is true (docs/operating/security.md#security)`,
    };
  if (!response.ok) return { unavailable: `${url} answers ${response.status}` };
  try {
    return { snapshot: (await response.json()) as StatusSnapshot };
  } catch (err) {
    return { unavailable: `${url} answers with something that is not JSON: ${describe(err)}` };
  }
}

function describe(err: unknown): string {
  if (typeof err === 'string') return err;
  // fetch's own message is "fetch failed"; the reason (ECONNREFUSED...) is its cause.
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

/** A part's health report in the running daemon's status.json (as GET /health has it); undefined when none answers. */
export async function liveDaemonPart(config: Config, part: string): Promise<Record<string, unknown> | undefined> {
  const status = await daemonStatus(config);
  return 'snapshot' in status ? status.snapshot.parts[part] : undefined;
}
