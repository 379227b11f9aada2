import { ConfigError, loadConfig, type Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { planReload } from './reload-scope.js';

/** A part of the daemon that takes a reloaded config (DaemonPart's shape, without a dependency on cli/). */
interface ReloadablePart {
  name: string;
  reload?(config: Config): void | Promise<void>;
}

export interface ConfigReloadOptions {
  configPath: string;
  running: Config;
  parts: readonly ReloadablePart[];
  logger: Logger;
  /** Makes the new config the one every `config()` reader sees, before the parts are told. */
  adopt(config: Config): void;
}

/**
 * Re-reads the config file. A file that does not validate is refused with its key paths and the running config
 * stays; otherwise the new config is adopted (start-bound keys kept, and named) and every part gets it, one failing
 * part not stopping the others. Resolves true when applied.
 */
export async function reloadConfig(options: ConfigReloadOptions): Promise<boolean> {
  const { logger } = options;
  let next: Config;
  try {
    next = loadConfig(options.configPath);
  } catch (err) {
    logger.error(
      { err: err instanceof ConfigError ? err.message : err },
      'config reload refused; the running config stays',
    );
    return false;
  }
  const plan = planReload(options.running, next);
  options.adopt(plan.config);
  logger.level = plan.config.log.level;
  for (const part of options.parts) {
    try {
      await part.reload?.(plan.config);
    } catch (err) {
      logger.error({ err, part: part.name }, 'part failed to apply the reloaded config');
    }
  }
  if (plan.restartRequired.length > 0)
    logger.warn({ keys: plan.restartRequired }, 'these config changes take effect only after a restart');
  logger.info({ config: options.configPath }, 'config reloaded');
  return true;
}
