import { InvalidArgumentError, Option, type Command } from 'commander';
import {
  circuitLimitState,
  findCircuit,
  limitCurrentProblem,
  limitUntilProblem,
  TemporaryLimits,
  type CircuitLimitState,
} from '../../load/index.js';
import { formatZonedTimestamp } from '../../time/index.js';
import { DirectWriter } from '../../store/index.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, output, withContext, type GlobalOptions } from '../context.js';
import { registerLoadStatus } from './load-status.js';

interface LimitOptions {
  current?: number;
  until?: string;
  clear?: boolean;
}

/** `--current A`: amperes per phase, a plain decimal number (no 1e3, no hex), within the API's bounds. */
function amperes(value: string): number {
  const problem = /^\d+(\.\d+)?$/.test(value) ? limitCurrentProblem(Number(value)) : 'expected a number of amperes';
  if (problem) throw new InvalidArgumentError(problem);
  return Number(value);
}

/**
 * `chargegate load status|limit`: what load management does, and temporary circuit limits (docs/configuration/circuits.md#circuits-load-management).
 */
export function registerLoad(program: Command): void {
  const load = program
    .command('load')
    .description('load management: circuits and the connectors sharing them, temporary circuit limits');
  registerLoadStatus(load);

  load
    .command('limit')
    .description(
      "set a circuit's temporary limit (a grid operator's dimming order) until an instant, or end it with --clear; a running daemon applies it within ocpp.changePollMs",
    )
    .argument('<circuitId>', 'a circuit id from the config (unique across sites)')
    .option(
      '--current <A>',
      'the limit in A per phase; the circuit carries the lower of this and its configured maxCurrentA',
      amperes,
    )
    .option(
      '--until <iso>',
      'when the limit ends: ISO 8601 with seconds and an offset, in the future (required with --current)',
    )
    .addOption(new Option('--clear', "end the circuit's temporary limit now").conflicts(['current', 'until']))
    .action((circuitId: string, options: LimitOptions, cmd: Command) => {
      if (!options.clear && options.current === undefined && options.until === undefined)
        throw new CliError('give --current A and --until ISO to set a limit, or --clear to end one', EXIT_USAGE);
      if (!options.clear && options.current === undefined)
        throw new CliError('--current: required with --until (the limit in A per phase)', EXIT_USAGE);
      if (!options.clear && options.until === undefined)
        throw new CliError('--until: required with --current (a temporary limit ends)', EXIT_USAGE);
      const problem = options.until === undefined ? undefined : limitUntilProblem(options.until, new Date());
      if (problem) throw new CliError(`--until: "${options.until}": ${problem}`, EXIT_USAGE);
      return withContext(cmd.optsWithGlobals<GlobalOptions>(), async (ctx) => {
        const found = findCircuit(ctx.config, circuitId);
        if (!found) {
          const ids = ctx.config.sites.flatMap((s) => s.circuits.map((c) => c.id));
          throw new CliError(
            `no circuit "${circuitId}" in the config${ids.length > 0 ? ` (circuits: ${ids.join(', ')})` : ''}`,
            EXIT_FAILURE,
          );
        }
        const limits = new TemporaryLimits({ writer: new DirectWriter(ctx.db) });
        const state = (limit: Parameters<typeof circuitLimitState>[1]): CircuitLimitState =>
          circuitLimitState(found, limit, (at) => formatZonedTimestamp(at, ctx.config.timezone));

        if (options.clear) {
          if (!(await limits.clear(circuitId)))
            throw new CliError(`circuit "${circuitId}" has no temporary limit in force`, EXIT_FAILURE);
          const cleared = state(undefined);
          output(
            ctx.json,
            cleared,
            () =>
              `${circuitId}: temporary limit ended; the circuit carries its configured ${cleared.configuredMaxCurrentA} A again (the stations are raised after loadManagement.raiseAfterS).`,
          );
          return;
        }

        const set = state(
          await limits.set({
            circuitId,
            siteId: found.siteId,
            maxCurrentA: options.current!,
            until: new Date(options.until!),
            setBy: 'cli',
          }),
        );
        output(ctx.json, set, () =>
          [
            `${circuitId}: limited to ${set.temporaryLimit!.maxCurrentA} A per phase until ${set.temporaryLimit!.until}.`,
            set.effectiveMaxCurrentA < set.configuredMaxCurrentA
              ? `The circuit carries ${set.effectiveMaxCurrentA} A instead of its configured ${set.configuredMaxCurrentA} A; a running daemon lowers the stations within ocpp.changePollMs.`
              : `That is not below its configured ${set.configuredMaxCurrentA} A: nothing changes (a temporary limit only lowers).`,
          ].join('\n'),
        );
      });
    });
}
