import type { Command } from 'commander';

/**
 * Every command group, in the order help lists them, each loaded only when run: a command imports its own part of
 * chargegate (the daemon's graph alone costs ~0.3 s of CPU at start, ocpp-rpc's schemas most of it), not all of it.
 */
const GROUPS: ReadonlyArray<{ name: string; load: () => Promise<(program: Command) => void> }> = [
  { name: 'run', load: async () => (await import('./run.js')).registerRun },
  { name: 'check-config', load: async () => (await import('./check-config.js')).registerCheckConfig },
  { name: 'app', load: async () => (await import('./app.js')).registerApp },
  { name: 'keys', load: async () => (await import('./keys.js')).registerKeys },
  { name: 'station', load: async () => (await import('./station.js')).registerStation },
  { name: 'firmware', load: async () => (await import('./firmware.js')).registerFirmware },
  { name: 'meter', load: async () => (await import('./meter.js')).registerMeter },
  { name: 'load', load: async () => (await import('./load.js')).registerLoad },
  { name: 'idtag', load: async () => (await import('./idtag.js')).registerIdTag },
  { name: 'transaction', load: async () => (await import('./transaction.js')).registerTransaction },
  { name: 'upstream', load: async () => (await import('./upstream.js')).registerUpstream },
  { name: 'webhook', load: async () => (await import('./webhook.js')).registerWebhook },
  { name: 'deadletter', load: async () => (await import('./deadletter.js')).registerDeadletter },
  { name: 'rollback', load: async () => (await import('./rollback.js')).registerRollback },
];

/**
 * Registers the group `args` (the command line after the program) names; none for --version alone; every group when
 * it names none of them (help, a typo: commander then lists or suggests from all of them).
 */
export async function registerCommands(program: Command, args: readonly string[]): Promise<void> {
  const named = commandName(args);
  if (named === undefined && args.some((a) => a === '-V' || a === '--version')) return;
  const group = GROUPS.find((g) => g.name === named);
  for (const { load } of group ? [group] : GROUPS) (await load())(program);
}

/** The first argument that is neither a global option nor the value of --config. */
function commandName(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--config') i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}
