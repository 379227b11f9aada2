import type { Command } from 'commander';
import { loadCommandConfig, output, type GlobalOptions } from '../context.js';

export function registerCheckConfig(program: Command): void {
  program
    .command('check-config')
    .description('validate the config file: exit 0 when usable, 2 with the key path of every problem')
    .action((_options, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { configPath, config } = loadCommandConfig(globals);
      output(globals.json === true, { ok: true, file: configPath, sites: config.sites.map((s) => s.id) }, () => `${configPath}: ok (${config.sites.length} site${config.sites.length === 1 ? '' : 's'})`);
    });
}
