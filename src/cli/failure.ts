import { errorCodeOf, type ErrorCode } from '../errors/index.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE } from './context.js';

/** chargegate's own errors that ask the installer to correct what they gave: the config or the command line. */
const USAGE_CODES = new Set<ErrorCode>([
  'CHARGEGATE_CONFIG',
  'CHARGEGATE_PLUGIN_LOAD',
  'CHARGEGATE_DOMAIN_REFUSED',
  'CHARGEGATE_APPLICATION_REFUSED',
  'CHARGEGATE_STATION_CSR',
]);

export interface CliFailure {
  message: string;
  exitCode: number;
}

/**
 * The one place the CLI turns an error into what the installer reads (docs/operating/cli.md#command-line, exit codes): every error
 * chargegate raises on purpose has a code from ERROR_CODES and a message meant to be read as it is; exit 2 for a
 * usage or config problem, 1 otherwise. Undefined for any other error: a bug, whose stack is worth reading.
 */
export function cliFailure(err: unknown): CliFailure | undefined {
  if (err instanceof CliError) return { message: err.message, exitCode: err.exitCode };
  const code = errorCodeOf(err);
  if (code === undefined) return undefined;
  return { message: (err as Error).message, exitCode: USAGE_CODES.has(code) ? EXIT_USAGE : EXIT_FAILURE };
}
