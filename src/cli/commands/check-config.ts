import type { Command } from 'commander';
import { ConfigError, unreadableFiles } from '../../config/index.js';
import { CliError, EXIT_USAGE, loadCommandConfig, output, type GlobalOptions } from '../context.js';

export function registerCheckConfig(program: Command): void {
  program
    .command('check-config')
    .description('validate the config file: exit 0 when usable, 2 with the key path of every problem')
    .action((_options, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { configPath, config } = loadCommandConfig(globals);
      // What the daemon would fail on at start: better told now, by the check systemctl reload runs first.
      const unreadable = unreadableFiles(config);
      if (unreadable.length > 0) throw new CliError(new ConfigError(configPath, unreadable).message, EXIT_USAGE);
      output(
        globals.json === true,
        { ok: true, file: configPath, sites: config.sites.map((s) => s.id) },
        () => `${configPath}: ok (${config.sites.length} site${config.sites.length === 1 ? '' : 's'})`,
      );
    });
}
