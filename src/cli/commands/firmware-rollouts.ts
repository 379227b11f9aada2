import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import type { RolloutView } from '../../firmware/index.js';
import {
  CliError,
  EXIT_FAILURE,
  EXIT_USAGE,
  loadCommandConfig,
  output,
  repeatable,
  table,
  wholeNumber,
  type GlobalOptions,
} from '../context.js';
import { askDaemon, type LocalAnswer } from '../local-client.js';

/** How often `firmware rollout --wait` asks the daemon how its rollout goes. */
const WAIT_POLL_MS = 2000;

/**
 * `chargegate firmware rollout|status|cancel`: the running daemon does them, reached over its local channel as the
 * station commands are (docs/operating/firmware-and-logs.md#firmware).
 */
export function registerFirmwareRollouts(firmware: Command): void {
  firmware
    .command('rollout')
    .description('update stations with an image: idle ones first, charging ones after their transactions end')
    .argument('<imageId>')
    .option('--station <id>', 'a station (repeat for several; sent in this order)', repeatable, [])
    .option('--site <siteId>', 'every station of the site')
    .option('--parallel <n>', 'at most this many stations updating at once', wholeNumber(1, 100), 1)
    .option('--force', 'send charging stations too: their car stops charging when they restart')
    .option('--continue', "go on after a station's failure (by default no further station is sent)")
    .option('--wait', 'follow the rollout to its end: exit 0 when every station installed')
    .action(async (imageId: string, options: RolloutOptions, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      if (options.station.length > 0 === (options.site !== undefined))
        throw new CliError('give --station (one or more) or --site', EXIT_USAGE);
      const config = loadCommandConfig(globals).config;
      const answer = await askDaemon(config, 'POST', '/firmware/rollouts', {
        imageId,
        ...(options.site === undefined ? { stationIds: options.station } : { siteId: options.site }),
        parallel: options.parallel,
        force: options.force === true,
        continueOnFailure: options.continue === true,
      });
      const rollout = expect(answer, 201);
      if (!options.wait)
        return output(globals.json === true, { rolloutId: rollout.rolloutId }, () => describe(rollout));
      let last = rollout;
      while (last.endedAt === null) {
        await sleep(WAIT_POLL_MS);
        last = expect(await askDaemon(config, 'GET', `/firmware/rollouts/${last.rolloutId}`), 200);
        if (globals.json !== true) process.stderr.write(`${progressLine(last)}\n`);
      }
      output(globals.json === true, last, () => describe(last));
      if (last.stations.some((s) => s.state !== 'installed')) process.exitCode = EXIT_FAILURE;
    });

  firmware
    .command('status')
    .description('each station of a rollout (the newest rollouts without one): waiting, sent, ..., installed, failed')
    .argument('[rolloutId]')
    .action(async (rolloutId: string | undefined, _options: unknown, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const config = loadCommandConfig(globals).config;
      if (rolloutId === undefined) {
        const rollouts = expect<RolloutView[]>(await askDaemon(config, 'GET', '/firmware/rollouts'), 200);
        return output(globals.json === true, { rollouts }, () => rollouts.map(describe).join('\n\n') || '(none)');
      }
      const rollout = expect(
        await askDaemon(config, 'GET', `/firmware/rollouts/${encodeURIComponent(rolloutId)}`),
        200,
      );
      output(globals.json === true, rollout, () => describe(rollout));
    });

  firmware
    .command('cancel')
    .description('cancel every station of a rollout not yet sent (those under way finish)')
    .argument('<rolloutId>')
    .action(async (rolloutId: string, _options: unknown, cmd: Command) => {
      const globals = cmd.optsWithGlobals<GlobalOptions>();
      const config = loadCommandConfig(globals).config;
      const answer = await askDaemon(config, 'DELETE', `/firmware/rollouts/${encodeURIComponent(rolloutId)}`);
      const rollout = expect(answer, 200);
      output(globals.json === true, rollout, () => describe(rollout));
    });
}

interface RolloutOptions {
  station: string[];
  site?: string;
  parallel: number;
  force?: boolean;
  continue?: boolean;
  wait?: boolean;
}

/** The daemon's document when it answered `status`; otherwise its message, exit 2 for what was typed wrong, else 1. */
function expect<T = RolloutView>(answer: LocalAnswer, status: number): T {
  if (answer.status === status) return answer.body as T;
  const body = (answer.body ?? {}) as { message?: string };
  throw new CliError(
    body.message ?? `the daemon answered ${answer.status}`,
    answer.status === 400 ? EXIT_USAGE : EXIT_FAILURE,
  );
}

function progressLine(r: RolloutView): string {
  const count = new Map<string, number>();
  for (const s of r.stations) count.set(s.state, (count.get(s.state) ?? 0) + 1);
  return `${r.rolloutId} ${r.state}: ${[...count].map(([state, n]) => `${n} ${state}`).join(', ')}`;
}

function describe(r: RolloutView): string {
  return [
    `Rollout ${r.rolloutId} of image ${r.imageId}: ${r.state}${r.endedAt ? `, ended ${r.endedAt}` : ''} (at most ${r.parallel} at once${r.force ? ', forced' : ''}${r.continueOnFailure ? ', continues after a failure' : ''}; by ${r.who} at ${r.createdAt})`,
    table(
      ['STATION', 'STATE', 'SINCE', 'WHY'],
      r.stations.map((s) => [s.stationId, s.state, s.endedAt ?? s.progressAt ?? '-', s.reason ?? '']),
    ),
  ].join('\n');
}
