import type { Command } from 'commander';
import { ConfigError } from '../../config/index.js';
import { DataDirInUseError } from '../../store/index.js';
import { CliError, EXIT_USAGE, loadCommandConfig, type GlobalOptions } from '../context.js';

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run the daemon (OCPP central system, Modbus poller, webhook delivery, HTTP API)')
    .action(async (_options, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { configPath, config } = loadCommandConfig(globals);
      // Loaded here, not at the top: every other command would otherwise pay for loading the whole daemon.
      const { startDaemon } = await import('../daemon.js');
      try {
        await startDaemon({ configPath, config });
      } catch (err) {
        if (err instanceof ConfigError) throw new CliError(err.message, EXIT_USAGE);
        if (err instanceof DataDirInUseError) throw new CliError(err.message);
        throw err;
      }
    });
}
