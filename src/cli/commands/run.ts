import type { Command } from 'commander';
import { startDaemon } from '../daemon.js';
import { loadCommandConfig, type GlobalOptions } from '../context.js';

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run the daemon (OCPP central system, Modbus poller, webhook delivery, HTTP API)')
    .action(async (_options, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { configPath, config } = loadCommandConfig(globals);
      await startDaemon({ configPath, config });
    });
}
