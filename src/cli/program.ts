import { Command, CommanderError } from 'commander';
import { registerCommands } from './commands/index.js';
import { EXIT_FAILURE, EXIT_USAGE } from './context.js';
import { cliFailure } from './failure.js';
import { messageOf } from '../log/index.js';
import { packageVersion } from './package-version.js';

const program = new Command('chargegate')
  .description('Edge controller for EV-charging sites')
  .version(packageVersion(), '-V, --version', 'print the version')
  .option('--config <file>', 'config file (default: $CHARGEGATE_CONFIG or /etc/chargegate/chargegate.yaml)')
  .option('--json', 'print one JSON document')
  // Every subcommand's --help lists --config and --json too: an installer reads only the help of the command at hand.
  .configureHelp({ showGlobalOptions: true })
  .showHelpAfterError()
  .exitOverride();

await registerCommands(program, process.argv.slice(2));

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const json = process.argv.includes('--json');
  if (err instanceof CommanderError) {
    // Commander has told the human on stderr; with --json the caller still gets one document.
    if (json && err.exitCode !== 0)
      process.stdout.write(`${JSON.stringify({ error: err.message.replace(/^error: /, '') }, null, 2)}\n`);
    process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
  } else {
    const failure = cliFailure(err);
    if (json) process.stdout.write(`${JSON.stringify({ error: failure?.message ?? messageOf(err) }, null, 2)}\n`);
    process.stderr.write(
      `chargegate: ${failure?.message ?? (err instanceof Error ? (err.stack ?? err.message) : String(err))}\n`,
    );
    process.exitCode = failure?.exitCode ?? EXIT_FAILURE;
  }
}
