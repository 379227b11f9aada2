import { InvalidArgumentError } from 'commander';
import { loadConfig, resolveConfigPath, type Config } from '../config/index.js';
import { openDatabase, type Database } from '../store/index.js';
import { ChargegateError } from '../errors/index.js';

/** The CLI's exit codes (docs/operating/cli.md#command-line). */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export interface GlobalOptions {
  config?: string;
  json?: boolean;
}

/** A failure the CLI reports as one line (or a JSON `{error}`), with its exit code. */
export class CliError extends ChargegateError {
  readonly code = 'CHARGEGATE_CLI';
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

export interface CommandContext {
  configPath: string;
  config: Config;
  db: Database;
  json: boolean;
}

export function loadCommandConfig(options: GlobalOptions): { configPath: string; config: Config } {
  const configPath = resolveConfigPath(options.config);
  return { configPath, config: loadConfig(configPath) };
}

/** Loads the config and opens the database for a command, closing it whatever the command does. */
export async function withContext<T>(options: GlobalOptions, fn: (ctx: CommandContext) => T | Promise<T>): Promise<T> {
  const { configPath, config } = loadCommandConfig(options);
  const db = openDatabase(config.dataDir);
  try {
    return await fn({ configPath, config, db, json: options.json === true });
  } finally {
    db.close();
  }
}

/** Prints one JSON document with --json, else the human text. */
export function output(json: boolean, data: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
}

/**
 * An option parser for whole numbers from `min` to `max`; commander reports a bad value as a usage error (exit 2).
 * The upper bound keeps a typo from reaching a Date or a timer as a value they cannot hold.
 */
export function wholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`expected a whole number of at least ${min} and at most ${max}`);
    return Number(value);
  };
}

/** Commander option parser for a flag that may be given several times (`--group a --group b`). */
export function repeatable(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Fixed-width columns for human listings. */
export function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '(none)';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
