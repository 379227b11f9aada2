import type { Command } from 'commander';
/** The applications folder brings jose: loaded by the commands that use it, so other commands start faster. */
const applications = () => import('../../applications/index.js');
import { output, repeatable, table, wholeNumber, withContext, type GlobalOptions } from '../context.js';

/** The longest an old client secret may keep working after a rotation. */
const MAX_GRACE_S = 365 * 86_400;

/**
 * `app create|list|rotate-secret|revoke`: the OAuth 2.0 clients of the API (docs/operating/applications-and-keys.md#applications-groups-and-keys-installers).
 */
export function registerApp(program: Command): void {
  const app = program.command('app').description('API applications (OAuth 2.0 clients)');

  app
    .command('create')
    .description('register an application in one or more config groups; prints its clientId and clientSecret once')
    .requiredOption('--name <name>', 'a name for people')
    .requiredOption('--group <id>', 'a group from the config (repeat for several)', repeatable, [])
    .option('--description <text>', 'what the application is for')
    .action(async (options: { name: string; group: string[]; description?: string }, cmd: Command) => {
      const { Applications } = await applications();
      await withContext(cmd.optsWithGlobals<GlobalOptions>(), ({ config, db, json }) => {
        const created = new Applications({ db }).create(config, {
          name: options.name,
          description: options.description,
          groupIds: options.group,
        });
        output(json, { clientId: created.clientId, clientSecret: created.clientSecret }, () =>
          [
            `clientId:     ${created.clientId}`,
            `clientSecret: ${created.clientSecret}`,
            '',
            'Store the secret now: it is shown only once (only its hash is kept).',
          ].join('\n'),
        );
      });
    });

  app
    .command('list')
    .description('applications with their groups; never secrets')
    .action(async (_options, cmd: Command) => {
      const { Applications } = await applications();
      await withContext(cmd.optsWithGlobals<GlobalOptions>(), ({ db, json }) => {
        const apps = new Applications({ db }).list();
        output(json, apps, () =>
          table(
            ['CLIENT ID', 'NAME', 'GROUPS', 'CREATED', 'REVOKED'],
            apps.map((a) => [a.clientId, a.name, a.groupIds.join(','), a.createdAt, a.revokedAt ?? '']),
          ),
        );
      });
    });

  app
    .command('rotate-secret')
    .description('give an application a new clientSecret, printed once; the old one keeps working for --grace seconds')
    .argument('<clientId>')
    .option(
      '--grace <seconds>',
      'how long the old secret stays valid (0: it stops at once; at most a year)',
      wholeNumber(0, MAX_GRACE_S),
      86_400,
    )
    .action(async (clientId: string, options: { grace: number }, cmd: Command) => {
      const { Applications } = await applications();
      await withContext(cmd.optsWithGlobals<GlobalOptions>(), ({ db, json }) => {
        const rotated = new Applications({ db }).rotateSecret(clientId, options.grace);
        output(json, rotated, () =>
          [
            `clientId:     ${rotated.clientId}`,
            `clientSecret: ${rotated.clientSecret}`,
            '',
            rotated.previousValidUntil === null
              ? 'The old secret no longer works.'
              : `The old secret works until ${rotated.previousValidUntil}.`,
            'Store the new secret now: it is shown only once (only its hash is kept).',
          ].join('\n'),
        );
      });
    });

  app
    .command('revoke')
    .description('revoke an application: its secret and every token it holds stop working at once')
    .argument('<clientId>')
    .action(async (clientId: string, _options, cmd: Command) => {
      const { Applications } = await applications();
      await withContext(cmd.optsWithGlobals<GlobalOptions>(), ({ db, json }) => {
        const { application, alreadyRevoked } = new Applications({ db }).revoke(clientId);
        output(json, { ...application, alreadyRevoked }, () =>
          alreadyRevoked ? `${clientId} was already revoked at ${application.revokedAt}` : `${clientId} revoked`,
        );
      });
    });
}
