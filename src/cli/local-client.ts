import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import type { Config } from '../config/index.js';
import { CliError, EXIT_FAILURE } from './context.js';
import { localSocketPath } from './local-socket.js';

/** The daemon's answer on the local channel: its HTTP status and JSON body. */
export interface LocalAnswer {
  status: number;
  body: unknown;
}

/** Beyond the daemon's own bound (2 x ocpp.callTimeoutMs, waiting included): a daemon that hangs, not a station. */
const DAEMON_MARGIN_MS = 5000;

/** Why the socket could not be used, by errno, in the one line the installer reads. */
const UNREACHABLE: Record<string, string> = {
  ENOENT: 'daemon not running',
  ECONNREFUSED: 'daemon not running',
  EACCES: 'permission denied: run this as the user the daemon runs as (the data dir owner), or root',
};

/**
 * One request to the running daemon over its local channel (local-channel.ts). Exit 1 with one line when the daemon
 * is not there, cannot be used, or does not answer.
 */
export async function askDaemon(
  config: Config,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<LocalAnswer> {
  const socketPath = localSocketPath(config.dataDir);
  const timeoutMs = 2 * config.ocpp.callTimeoutMs + DAEMON_MARGIN_MS;
  const dispatcher = new Agent({ connect: { socketPath }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  try {
    const response = await request(`http://localhost${path}`, {
      method,
      dispatcher,
      ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: response.statusCode, body: await response.body.json() };
  } catch (err) {
    throw new CliError(unreachable(err, socketPath, timeoutMs), EXIT_FAILURE, { cause: err });
  } finally {
    await dispatcher.close();
  }
}

/** Copies a file the daemon serves over its local channel to `file` (written whole or not at all). */
export async function downloadFromDaemon(config: Config, path: string, file: string): Promise<void> {
  const socketPath = localSocketPath(config.dataDir);
  const timeoutMs = 2 * config.ocpp.callTimeoutMs + DAEMON_MARGIN_MS;
  const dispatcher = new Agent({ connect: { socketPath }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const partial = `${file}.partial`;
  try {
    const response = await request(`http://localhost${path}`, { method: 'GET', dispatcher }).catch((err: unknown) => {
      throw new CliError(unreachable(err, socketPath, timeoutMs), EXIT_FAILURE, { cause: err });
    });
    if (response.statusCode !== 200) {
      const body = (await response.body.json()) as { message?: string };
      throw new CliError(body.message ?? `the daemon answered ${response.statusCode}`, EXIT_FAILURE);
    }
    await pipeline(response.body, createWriteStream(partial, { mode: 0o600 })).catch((err: unknown) => {
      throw new CliError(`cannot write ${file}: ${(err as Error).message}`, EXIT_FAILURE, { cause: err });
    });
    renameSync(partial, file);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    await dispatcher.close();
  }
}

function unreachable(err: unknown, socketPath: string, timeoutMs: number): string {
  const { code } = err as { code?: string };
  const known = code === undefined ? undefined : UNREACHABLE[code];
  if (known) return `${known} (${socketPath})`;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return `no answer from the daemon within ${timeoutMs} ms (${socketPath})`;
  return `the daemon at ${socketPath} did not answer: ${(err as Error).message}`;
}
