import type { Command } from 'commander';
import { KeystoreError, openKeystore, type KeyInfo, type Keystore } from '../../keystore/index.js';
import { CliError, EXIT_FAILURE, loadCommandConfig, output, table, type GlobalOptions } from '../context.js';

/** `keys rotate|list`: the keystore's signing keys (contract section 5, key rotation). */
export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('signing keys: webhook `sign` key and access-token keys');

  keys
    .command('list')
    .description('keys with their kid, algorithm, state and dates; never private material')
    .action((_options, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const list = withKeystore(globals, (keystore) => keystore.list());
      output(globals.json === true, list, () => keyTable(list));
    });

  keys
    .command('rotate')
    .description('publish new keys now; they sign after keystore.nextKeyLeadS, and the old ones stay published for keystore.retiredKeyGraceS')
    .action((_options, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { result, list } = withKeystore(globals, (keystore) => ({ result: keystore.rotate(), list: keystore.list() }));
      output(globals.json === true, result, () =>
        [`New keys are published in the JWKS now and start signing at ${result.activatesAt}.`, 'The keys they replace stay published under their own kid until UNPUBLISHED.', '', keyTable(list)].join('\n'),
      );
    });
}

function withKeystore<T>(globals: GlobalOptions, fn: (keystore: Keystore) => T): T {
  const { config } = loadCommandConfig(globals);
  try {
    return fn(openKeystore(config));
  } catch (err) {
    if (err instanceof KeystoreError) throw new CliError(err.message, EXIT_FAILURE);
    throw err;
  }
}

function keyTable(list: KeyInfo[]): string {
  return table(
    ['ID', 'PURPOSE', 'ALG', 'STATE', 'JWKS KID', 'CREATED', 'SIGNS FROM', 'RETIRES', 'UNPUBLISHED'],
    list.map((k) => [k.id, k.purpose, k.alg, k.state, k.jwksKid ?? '-', k.createdAt, k.activatesAt, k.retiresAt ?? '-', k.expiresAt ?? '-']),
  );
}
