import type { Command } from 'commander';
import { ConfigError } from '../../config/index.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, loadCommandConfig, type GlobalOptions } from '../context.js';
import { describeStartupFailure } from '../startup-failure.js';
import { messageOf } from '../../log/index.js';

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
        const line = describeStartupFailure(err, config);
        if (line !== undefined) throw new CliError(line, EXIT_FAILURE, { cause: err });
        // Not a problem an installer can fix: the stack helps whoever reads the report, but only when asked for.
        if (config.log.level === 'debug') throw err;
        throw new CliError(`${messageOf(err)} (log.level: debug shows where)`, EXIT_FAILURE, { cause: err });
      }
    });
}
