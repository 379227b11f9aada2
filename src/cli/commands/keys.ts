import { hostname } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import {
  createGatewayCertificate,
  listKeys,
  openKeystore,
  saveGatewayCertificate,
  STATION_CA_DAYS,
  type KeyInfo,
  type Keystore,
} from '../../keystore/index.js';
import {
  CliError,
  EXIT_FAILURE,
  loadCommandConfig,
  output,
  repeatable,
  table,
  wholeNumber,
  type GlobalOptions,
} from '../context.js';

/**
 * `keys list|rotate`: the keystore's signing keys (docs/operating/applications-and-keys.md#applications-groups-and-keys-installers); `keys
 * tls-cert` for OCPP profile 2.
 */
export function registerKeys(program: Command): void {
  const keys = program
    .command('keys')
    .description('signing keys: webhook keys (RSA `sign`, Ed25519) and access-token keys');

  keys
    .command('list')
    .description('keys with their kid, algorithm, state and dates; never private material, so no passphrase is needed')
    .action(async (_options, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { config } = loadCommandConfig(globals);
      const stored = listKeys(config.dataDir);
      // No keystore yet: it is made now, as the daemon would at its first start (encrypted when a passphrase is given).
      const list = stored ?? (await withKeystore(globals, (keystore) => keystore.list()));
      output(globals.json === true, list, () => keyTable(list));
    });

  keys
    .command('rotate')
    .description(
      'publish new keys now; they sign after keystore.nextKeyLeadS, and the old ones stay published for keystore.retiredKeyGraceS',
    )
    .action(async (_options, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { result, list } = await withKeystore(globals, async (keystore) => ({
        result: await keystore.rotate(),
        list: keystore.list(),
      }));
      output(globals.json === true, result, () =>
        [
          `New keys are published in the JWKS now and start signing at ${result.activatesAt}.`,
          'The keys they replace stay published under their own kid until UNPUBLISHED.',
          '',
          keyTable(list),
        ].join('\n'),
      );
    });

  keys
    .command('tls-cert')
    .description(
      'make a self-signed certificate for the OCPP listener (security profile 2) and print what ocpp.tls and the stations need',
    )
    .option(
      '--name <host-or-ip>',
      'a host name or IP address stations dial (repeat; default: ocpp.host unless a wildcard, and this host name)',
      repeatable,
      [],
    )
    .option('--days <n>', 'validity in days', wholeNumber(1, STATION_CA_DAYS), 825)
    .option('--out <dir>', 'directory for ocpp-cert.pem and ocpp-key.pem (default: <dataDir>/tls)')
    .option('--force', 'replace existing files (renewal); stations must then trust the new certificate')
    .action(async (options: { name: string[]; days: number; out?: string; force?: boolean }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { config } = loadCommandConfig(globals);
      const names = options.name.length > 0 ? options.name : defaultCertificateNames(config.ocpp.host);
      const certificate = await createGatewayCertificate({ names, validDays: options.days });
      let paths: { cert: string; key: string };
      try {
        paths = saveGatewayCertificate(
          options.out ?? path.join(config.dataDir, 'tls'),
          certificate,
          options.force === true,
        );
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST')
          throw new CliError(
            `${(err as NodeJS.ErrnoException).path ?? 'certificate'} exists; pass --force to replace it`,
            EXIT_FAILURE,
          );
        throw err;
      }
      output(
        globals.json === true,
        {
          ...paths,
          names,
          fingerprintSha256: certificate.fingerprintSha256,
          notAfter: certificate.notAfter,
          certificate: certificate.certificate,
        },
        () =>
          [
            `certificate: ${paths.cert}`,
            `private key: ${paths.key}`,
            `names:       ${names.join(', ')}`,
            `valid until: ${certificate.notAfter}`,
            `SHA-256:     ${certificate.fingerprintSha256}`,
            '',
            'In the config:',
            `  ocpp: { securityProfile: 2, tls: { cert: ${paths.cert}, key: ${paths.key} } }`,
            'Install the certificate file on every station as its trusted CA for the central system.',
          ].join('\n'),
      );
    });
}

/**
 * The addresses stations most likely dial: the listener's own address (unless it listens everywhere) and this host's
 * name.
 */
function defaultCertificateNames(ocppHost: string): string[] {
  const wildcard = ocppHost === '0.0.0.0' || ocppHost === '::' || ocppHost === '';
  return [...new Set([...(wildcard ? [] : [ocppHost]), hostname()])];
}

async function withKeystore<T>(globals: GlobalOptions, fn: (keystore: Keystore) => T | Promise<T>): Promise<T> {
  const { config } = loadCommandConfig(globals);
  return fn(await openKeystore(config));
}

function keyTable(list: KeyInfo[]): string {
  return table(
    ['ID', 'PURPOSE', 'ALG', 'STATE', 'JWKS KID', 'CREATED', 'SIGNS FROM', 'RETIRES', 'UNPUBLISHED'],
    list.map((k) => [
      k.id,
      k.purpose,
      k.alg,
      k.state,
      k.jwksKid ?? '-',
      k.createdAt,
      k.activatesAt,
      k.retiresAt ?? '-',
      k.expiresAt ?? '-',
    ]),
  );
}
