import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { readConfiguredFile } from '../../config/index.js';
import { openKeystore, STATION_CA_DAYS, STATION_CERTIFICATE_DAYS } from '../../keystore/index.js';
import { meterKeyHex, MeterKeyError, parseMeterPublicKey } from '../../meter-signatures/index.js';
import { Site, stationIdentity } from '../../site/index.js';
import {
  CliError,
  EXIT_FAILURE,
  EXIT_USAGE,
  loadCommandConfig,
  output,
  table,
  wholeNumber,
  withContext,
  type CommandContext,
  type GlobalOptions,
} from '../context.js';
import { registerStationOperations } from './station-operations.js';

/**
 * `chargegate station list|pair|cert|meter-key|block|remove`: the installer's side of admitting stations
 * (docs/install/connecting-stations.md#connecting-a-station); the live commands (reset, unlock, config...) in
 * station-operations.ts.
 */
export function registerStation(program: Command): void {
  const station = program
    .command('station')
    .description(
      'OCPP stations: list, pair (prints the basic-auth password once), cert (profile 3), block, remove; live: reset, unlock, availability, trigger, config, clear-cache, report, show',
    );

  station
    .command('list')
    .description(
      'stations in the config or seen by the daemon, with pairing state, online state, vendor, model and firmware',
    )
    .option('--pending', 'only unknown stations that connected and wait for `station pair`')
    .option('--all', 'also removed stations')
    .action((options: { pending?: boolean; all?: boolean }, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        const stations = siteOf(ctx)
          .stations.list({ includeRemoved: options.all === true })
          .filter((s) => !options.pending || s.state === 'pending')
          .map((s) => ({ ...s, ...stationIdentity(s.bootInfo) }));
        output(ctx.json, { stations }, () =>
          table(
            ['STATION', 'SITE', 'STATE', 'ONLINE', 'LAST SEEN', 'PASSWORD', 'VENDOR', 'MODEL', 'FIRMWARE'],
            stations.map((s) => [
              s.id,
              s.siteId ?? '-',
              s.state,
              s.online ? 'yes' : 'no',
              s.lastSeen ?? '-',
              s.hasPassword ? 'set' : '-',
              s.vendor ?? '-',
              s.model ?? '-',
              s.firmwareVersion ?? '-',
            ]),
          ),
        );
      }),
    );

  station
    .command('pair')
    .description('approve a pending or new station for a site; prints its new OCPP basic-auth password once')
    .argument('<stationId>', 'the OCPP identity (last segment of the station URL)')
    .option(
      '--site <siteId>',
      'the site the station belongs to (not needed when the config has one site, or lists the station)',
    )
    .action((stationId: string, options: { site?: string }, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        const site = siteOf(ctx);
        const siteId = options.site ?? site.directory.configuredSiteOf(stationId) ?? onlySite(ctx);
        const { password } = site.stations.pair(stationId, siteId);
        const { ocpp } = ctx.config;
        // A wildcard listen address is not one a station can dial: show where the gateway's own address goes.
        const host = ['0.0.0.0', '::', '[::]'].includes(ocpp.host) ? '<gateway-address>' : ocpp.host;
        const url = `${ocpp.securityProfile >= 2 ? 'wss' : 'ws'}://${host}:${ocpp.port}${ocpp.path}/${stationId}`;
        output(ctx.json, { stationId, siteId, password }, () =>
          [
            `Paired ${stationId} with site ${siteId}.`,
            `OCPP basic-auth password (shown only now): ${password}`,
            `Station settings: URL ${url}, user ${stationId}${ocpp.securityProfile === 0 ? ' (security profile 0: the password is not asked for)' : ''}.`,
            'A connected station is disconnected now and admitted when it reconnects.',
          ].join('\n'),
        );
      }),
    );

  station
    .command('cert')
    .description(
      "sign a station's certificate signing request with the gateway's station CA (security profile 3); prints the certificate and the CA",
    )
    .argument('<stationId>', "the OCPP identity; the CSR's common name must be exactly this")
    .requiredOption('--csr <file>', 'the PEM certificate signing request the station made')
    .option('--days <n>', 'validity in days', wholeNumber(1, STATION_CA_DAYS), STATION_CERTIFICATE_DAYS)
    .option('--out <file>', 'write the certificate chain (station, then CA) here instead of printing it')
    .action(async (stationId: string, options: { csr: string; days: number; out?: string }, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const { config } = loadCommandConfig(globals);
      const csr = readConfiguredFile(options.csr, '--csr').toString('utf8');
      const keystore = await openKeystore(config);
      const certificate = await keystore.issueStationCertificate(csr, stationId, options.days);
      const stationCa = await keystore.ensureStationCa();
      const chain = `${certificate}${stationCa}`;
      if (options.out) writeFileSync(options.out, chain, { mode: 0o644 });
      const notAfter = new Date(new X509Certificate(certificate).validTo).toISOString();
      output(
        globals.json === true,
        { stationId, certificate, stationCa, notAfter, ...(options.out && { out: options.out }) },
        () =>
          options.out
            ? `Certificate for ${stationId} (valid until ${notAfter}) and the station CA written to ${options.out}: install both on the station.`
            : chain.trimEnd(),
      );
    });

  station
    .command('meter-key')
    .description(
      "pin a meter's public key for a station: its signed readings verify against the pinned keys only (docs/partners/signed-meter-values.md#signed-meter-values)",
    )
    .argument('<stationId>')
    .argument(
      '<key>',
      'PEM, or the hex or base64 of the DER SubjectPublicKeyInfo (as the meter label or its maker gives it)',
    )
    .option('--remove', 'remove this pin instead')
    .action((stationId: string, key: string, options: { remove?: boolean }, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        const site = siteOf(ctx);
        if (!site.stations.list({ includeRemoved: true }).some((s) => s.id === stationId))
          throw new CliError(`no station "${stationId}" in the config or the database`, EXIT_FAILURE);
        let publicKey: string;
        try {
          publicKey = meterKeyHex(parseMeterPublicKey(key));
        } catch (err) {
          if (err instanceof MeterKeyError) throw new CliError(`<key>: ${err.message}`, EXIT_USAGE);
          throw err;
        }
        if (options.remove) {
          if (!site.signedReadings.unpin(stationId, publicKey))
            throw new CliError(`no such meter key pinned for ${stationId} by this command`, EXIT_FAILURE);
          output(ctx.json, { stationId, publicKey, pinned: false }, () => `Meter key unpinned for ${stationId}.`);
          return;
        }
        site.signedReadings.pin(stationId, publicKey);
        output(
          ctx.json,
          { stationId, publicKey, pinned: true },
          () => `Meter key pinned for ${stationId} (with any in the config): ${publicKey}`,
        );
      }),
    );

  station
    .command('upstream-password')
    .description(
      'keep the basic-auth password the station presents to the CSMS (docs/design/uplink.md#uplink-what-the-csms-sees), read from stdin, in the keystore',
    )
    .argument('<stationId>', 'a station in the config or paired')
    .action((stationId: string, _options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), async (ctx) => {
        if (siteOf(ctx).stations.admission(stationId).verdict !== 'known')
          throw new CliError(`no station "${stationId}" in the config or paired`, EXIT_FAILURE);
        // One trailing newline is the terminal's or echo's, not the password's.
        const password = (await readStdin()).replace(/\r?\n$/, '');
        if (password.length === 0) throw new CliError('stdin: expected the password, got nothing', EXIT_USAGE);
        (await openKeystore(ctx.config)).setUpstreamPassword(stationId, password);
        output(
          ctx.json,
          { stationId, upstreamPassword: 'set' },
          () => `Upstream password of ${stationId} kept in the keystore; the uplink uses it at its next connect.`,
        );
      }),
    );

  for (const [name, state, description] of [
    ['block', 'blocked', 'refuse a station: BootNotification answers Rejected, its open connection is closed'],
    ['remove', 'removed', "forget a station's pairing: BootNotification answers Rejected until paired again"],
  ] as const) {
    station
      .command(name)
      .description(description)
      .argument('<stationId>')
      .action((stationId: string, _options: unknown, cmd: Command) =>
        withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
          const site = siteOf(ctx);
          if (!site.stations.list({ includeRemoved: true }).some((s) => s.id === stationId))
            throw new CliError(`no station "${stationId}" in the config or the database`, EXIT_FAILURE);
          site.stations.setState(stationId, state);
          output(ctx.json, { stationId, state }, () => `${stationId} is ${state}.`);
        }),
      );
  }

  registerStationOperations(station);
}

/** The config's one site; with several, which one cannot be guessed. */
function onlySite(ctx: CommandContext): string {
  const ids = ctx.config.sites.map((s) => s.id);
  if (ids.length === 1) return ids[0]!;
  throw new CliError(`--site is needed: the config has ${ids.length} sites (${ids.join(', ')})`, EXIT_USAGE);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function siteOf(ctx: CommandContext): Site {
  return new Site({ db: ctx.db, config: () => ctx.config });
}
