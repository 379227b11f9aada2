import { Option, type Command } from 'commander';
import {
  LOCAL_TAG_STATUSES,
  listCsmsIdTags,
  listIdTags,
  MAX_ID_TAG_LENGTH,
  putIdTag,
  removeIdTag,
  type LocalTagStatus,
} from '../../authorization/index.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, output, table, withContext, type GlobalOptions } from '../context.js';

/**
 * `chargegate idtag add|list|remove`: the local authorization list (docs/install/connecting-stations.md#connecting-a-station, who may charge). The
 * daemon reads it per decision.
 */
export function registerIdTag(program: Command): void {
  const idtag = program.command('idtag').description('local authorization list of idTags');

  idtag
    .command('add')
    .description('add a tag, or replace its status, expiry and site')
    .argument('<tag>', `the idTag (RFID UID etc.), at most ${MAX_ID_TAG_LENGTH} characters`)
    .addOption(
      new Option('--status <status>', 'status answered for the tag').choices(LOCAL_TAG_STATUSES).default('Accepted'),
    )
    .option('--expires <iso>', 'expiry as ISO 8601 date-time; afterwards the tag answers Expired')
    .option('--site <siteId>', 'accept the tag only at this site (default: every site)')
    .action((tag: string, options: { status: LocalTagStatus; expires?: string; site?: string }, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        if (tag.length === 0 || tag.length > MAX_ID_TAG_LENGTH)
          throw new CliError(`tag: must be 1 to ${MAX_ID_TAG_LENGTH} characters (OCPP 1.6 IdToken)`, EXIT_USAGE);
        let expiresAt: string | null = null;
        if (options.expires !== undefined) {
          const at = Date.parse(options.expires);
          if (!/^\d{4}-\d{2}-\d{2}/.test(options.expires) || Number.isNaN(at))
            throw new CliError(`--expires: "${options.expires}" is not an ISO 8601 date-time`, EXIT_USAGE);
          expiresAt = new Date(at).toISOString();
        }
        if (options.site !== undefined && !ctx.config.sites.some((s) => s.id === options.site))
          throw new CliError(`--site: no site "${options.site}" in the config`, EXIT_USAGE);
        const saved = putIdTag(ctx.db, { idTag: tag, status: options.status, expiresAt, siteId: options.site ?? null });
        output(
          ctx.json,
          saved,
          () =>
            `${tag}: ${saved.status}${expiresAt ? ` until ${expiresAt}` : ''}${saved.siteId ? ` at site ${saved.siteId}` : ''}`,
        );
      }),
    );

  idtag
    .command('list')
    .description("the local list: the installer's entries, then those the CSMS gave each station (uplink)")
    .action((_options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        // In the order the decision chain reads them (docs/design/uplink.md#uplink-what-the-csms-sees).
        const installer = listIdTags(ctx.db).map((t) => ({ ...t, source: 'installer' as const }));
        const csms = listCsmsIdTags(ctx.db).map((t) => ({ ...t, source: 'csms' as const }));
        output(ctx.json, { idTags: [...installer, ...csms] }, () =>
          table(
            ['TAG', 'STATUS', 'EXPIRES', 'SITE', 'SOURCE'],
            [
              ...installer.map((t) => [t.idTag, t.status, t.expiresAt ?? '-', t.siteId ?? '(all)', t.source]),
              ...csms.map((t) => [
                t.idTag,
                t.status,
                t.expiresAt ?? '-',
                '-',
                `csms: station ${t.stationId}, list version ${t.listVersion}`,
              ]),
            ],
          ),
        );
      }),
    );

  idtag
    .command('remove')
    .description('remove a tag from the local list (it then falls through to upstream or Invalid)')
    .argument('<tag>')
    .action((tag: string, _options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        if (!removeIdTag(ctx.db, tag)) {
          const csms = listCsmsIdTags(ctx.db).find((t) => t.idTag.toLowerCase() === tag.toLowerCase());
          throw new CliError(
            csms
              ? `"${tag}" is in the list the CSMS gave station ${csms.stationId}: only the CSMS changes it; \`idtag add ${tag} --status Blocked\` overrides it`
              : `no tag "${tag}" in the local list`,
            EXIT_FAILURE,
          );
        }
        output(ctx.json, { idTag: tag, removed: true }, () => `${tag} removed.`);
      }),
    );
}
