import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { configSchema, type Config } from './schema.js';
import { ChargegateError } from '../errors/index.js';

export const DEFAULT_CONFIG_PATH = '/etc/chargegate/chargegate.yaml';

/** A config that cannot be used; `message` names the file, the key path and what was expected. */
export class ConfigError extends ChargegateError {
  readonly code = 'CHARGEGATE_CONFIG';
  constructor(
    readonly file: string,
    readonly problems: string[],
    options?: ErrorOptions,
  ) {
    super(problems.map((p) => `${file}: ${p}`).join('\n'), options);
    this.name = 'ConfigError';
  }
}

/** The config path a command uses: --config, else $CHARGEGATE_CONFIG, else the system path. */
export function resolveConfigPath(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag ?? env.CHARGEGATE_CONFIG ?? DEFAULT_CONFIG_PATH;
}

export function loadConfig(file: string): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, [`cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`], { cause: err });
  }
  return parseConfig(text, file);
}

export function parseConfig(text: string, file = '<config>'): Config {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => `line ${e.linePos?.[0]?.line ?? '?'}: ${e.message.split('\n')[0]}`),
    );
  }
  const result = configSchema.safeParse(doc.toJS() ?? {});
  if (!result.success) throw new ConfigError(file, result.error.issues.map(describeIssue));
  return resolvePaths(result.data);
}

function resolvePaths(config: Config): Config {
  return {
    ...config,
    dataDir: path.resolve(config.dataDir),
    authorization: {
      ...config.authorization,
      plugin: config.authorization.plugin && path.resolve(config.authorization.plugin),
    },
    http: {
      ...config.http,
      tls: config.http.tls && { cert: path.resolve(config.http.tls.cert), key: path.resolve(config.http.tls.key) },
    },
    ocpp: {
      ...config.ocpp,
      tls: config.ocpp.tls && { cert: path.resolve(config.ocpp.tls.cert), key: path.resolve(config.ocpp.tls.key) },
    },
  };
}

/** `sites[0].stations[1].id: required` */
export function formatKeyPath(keyPath: ReadonlyArray<PropertyKey>): string {
  return (
    keyPath.reduce<string>(
      (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)),
      '',
    ) || '(top level)'
  );
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const at = formatKeyPath(issue.path);
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) return `${at}: required`;
  if (issue.code === 'unrecognized_keys')
    return `${at}: unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  return `${at}: ${issue.message.replace(/^Invalid input: /, '')}`;
}
