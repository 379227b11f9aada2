import type { Command } from 'commander';
import { lockDataDir, restoreUpgradeBackup, rollbackPlan } from '../../store/index.js';
import { CliError, loadCommandConfig, output, type GlobalOptions } from '../context.js';

/**
 * `chargegate rollback [--yes]`: undoes the last upgrade's migration by restoring the copy made before it
 * (docs/install/service.md#install-as-a-service, upgrading). Says first what is lost with it; restores only with --yes and with the daemon
 * stopped, and keeps the database it replaces.
 */
export function registerRollback(program: Command): void {
  program
    .command('rollback')
    .description(
      'restore the database copy made before the last upgrade migrated it (say what is lost; --yes to do it, service stopped)',
    )
    .option('--yes', 'restore it (the daemon must be stopped); without it, only say what would happen')
    .action((options: { yes?: boolean }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { config } = loadCommandConfig(globals);
      const plan = rollbackPlan(config.dataDir);
      if (!plan) throw new CliError(`no copy from before an upgrade in ${config.dataDir}: nothing to roll back`);
      const { lost } = plan;
      const losing = `${lost.events} events, ${lost.transactionsStarted} transactions started and ${lost.transactionsStopped} stopped since the upgrade`;
      if (!options.yes) {
        output(globals.json === true, { restored: false, ...plan }, () =>
          [
            `Would restore ${plan.backup.file} (schema ${plan.backup.schemaVersion}) over the database (schema ${plan.currentSchemaVersion}).`,
            `Lost with it: ${losing}; the current database is kept beside it.`,
            ...(plan.keystoreBackup
              ? [`The keystore goes back to ${plan.keystoreBackup} too (keys made since the upgrade go with it).`]
              : []),
            'Stop the service, run `chargegate rollback --yes`, then install the previous release.',
          ].join('\n'),
        );
        return;
      }
      // The daemon holds the data dir while it runs: a restore under it would be overwritten or corrupt it.
      const lock = lockDataDir(config.dataDir);
      try {
        const { keptAs, keystoreKeptAs } = restoreUpgradeBackup(config.dataDir, plan);
        output(globals.json === true, { restored: true, ...plan, keptAs, keystoreKeptAs: keystoreKeptAs ?? null }, () =>
          [
            `Restored schema ${plan.backup.schemaVersion} from ${plan.backup.file}; lost: ${losing}.`,
            `The database it replaced is ${keptAs}.`,
            ...(keystoreKeptAs
              ? [
                  `And the keystore as it was before the upgrade is back (keys made since go with it; partners fetch the JWKS again by themselves); the one it replaced is ${keystoreKeptAs}.`,
                ]
              : []),
            'Install the previous release now, then start the service.',
          ].join('\n'),
        );
      } finally {
        lock.release();
      }
    });
}
