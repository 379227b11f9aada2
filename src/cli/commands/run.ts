import type { Command } from 'commander';
import { messageOf } from '../../log/index.js';
import { CliError, EXIT_FAILURE, loadCommandConfig, type GlobalOptions } from '../context.js';
import { cliFailure } from '../failure.js';

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
        // A failure at start is one line (docs/operating/guarantees-and-faults.md#guarantees-and-faults). One that is not chargegate's own is a bug:
        // its stack helps whoever reads the report, but only when asked for.
        if (cliFailure(err) !== undefined || config.log.level === 'debug') throw err;
        throw new CliError(`${messageOf(err)} (log.level: debug shows where)`, EXIT_FAILURE, { cause: err });
      }
    });
}
