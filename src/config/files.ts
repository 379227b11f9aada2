import { accessSync, constants, readFileSync } from 'node:fs';
import type { Config } from './schema.js';
import { ChargegateError } from '../errors/index.js';

/** A file the config names that cannot be read: one line with the key path, what to check, code for the CLI. */
export class UnreadableFileError extends ChargegateError {
  override name = 'UnreadableFileError';
  readonly code = 'CHARGEGATE_FILE_UNREADABLE';
}

/** Reads a file the config names at keyPath (a TLS certificate or key). */
export function readConfiguredFile(file: string, keyPath: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new UnreadableFileError(
      `${keyPath}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}: check the path and that the chargegate user may read it`,
      { cause: err },
    );
  }
}

/** The files the config names (TLS, the authorization plugin) that this process cannot read, as config problems. */
export function unreadableFiles(config: Config): string[] {
  const named: Array<[string, string | undefined | null]> = [
    ['http.tls.cert', config.http.tls?.cert],
    ['http.tls.key', config.http.tls?.key],
    ['ocpp.tls.cert', config.ocpp.tls?.cert],
    ['ocpp.tls.key', config.ocpp.tls?.key],
    ['authorization.plugin', config.authorization.plugin],
    ['upstream.csms.tls.ca', config.upstream?.csms?.tls?.ca],
    ['upstream.csms.tls.cert', config.upstream?.csms?.tls?.cert],
    ['upstream.csms.tls.key', config.upstream?.csms?.tls?.key],
  ];
  return named.flatMap(([keyPath, file]) => {
    if (!file) return [];
    try {
      accessSync(file, constants.R_OK);
      return [];
    } catch (err) {
      return [`${keyPath}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`];
    }
  });
}
