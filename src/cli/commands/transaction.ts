import type { Command } from 'commander';
import { ocmfTextOf } from '../../meter-signatures/index.js';
import { Site, transactionWithReadings, type Transaction } from '../../site/index.js';
import {
  CliError,
  EXIT_FAILURE,
  EXIT_USAGE,
  output,
  table,
  wholeNumber,
  withContext,
  type CommandContext,
  type GlobalOptions,
} from '../context.js';

const transactionIdArgument = wholeNumber(1, Number.MAX_SAFE_INTEGER);

/**
 * `chargegate transaction show|export`: one transaction and its signed meter readings, for the installer and the
 * auditor (docs/partners/signed-meter-values.md#signed-meter-values).
 */
export function registerTransaction(program: Command): void {
  const transaction = program
    .command('transaction')
    .description(
      'one transaction: show it with its meter readings, export the signed ones for the transparency software',
    );

  transaction
    .command('show')
    .description('the transaction as GET /transactions/{id} returns it, with its register readings and signed ones')
    .argument('<transactionId>', 'the transactionId of the webhooks', transactionIdArgument)
    .action((transactionId: number, _options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        const detail = transactionWithReadings(ctx.db, find(ctx, transactionId), ctx.config.timezone);
        const { readings, signedMeterValues, ...fields } = detail;
        const yesNo = (v: boolean | null | undefined) => (v === true ? 'yes' : v === false ? 'NO' : '-');
        output(ctx.json, detail, () =>
          [
            ...Object.entries(fields).map(([k, v]) => `${k}: ${v ?? '-'}`),
            '',
            table(
              ['CONTEXT', 'TIMESTAMP', 'KWH'],
              readings.map((r) => [r.context, r.timestamp, String(r.energy)]),
            ),
            '',
            table(
              ['CONTEXT', 'TIMESTAMP', 'ENCODING', 'SIGNING METHOD', 'VERIFIED', 'CONSISTENT'],
              signedMeterValues.map((r) => [
                r.context,
                r.timestamp,
                r.encodingMethod ?? '-',
                r.signingMethod ?? '-',
                yesNo(r.verified),
                yesNo(r.consistent),
              ]),
            ),
          ].join('\n'),
        );
      }),
    );

  transaction
    .command('export')
    .description(
      'the OCMF records of the signed readings, one a line, as the S.A.F.E. transparency software reads them',
    )
    .argument('<transactionId>', 'the transactionId of the webhooks', transactionIdArgument)
    .requiredOption('--format <format>', 'ocmf (the only one)')
    .action((transactionId: number, options: { format: string }, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        if (options.format !== 'ocmf')
          throw new CliError(`--format: "${options.format}" is not a format; ocmf is the only one`, EXIT_USAGE);
        const found = find(ctx, transactionId);
        const readings = new Site({ db: ctx.db, config: () => ctx.config }).signedReadings.ofTransaction(found.id);
        const records = readings.flatMap((r) => ocmfTextOf(r) ?? []);
        if (records.length < readings.length)
          process.stderr.write(
            `${readings.length - records.length} signed reading(s) of transaction ${found.id} hold no OCMF record: left out\n`,
          );
        if (records.length > 0) process.stdout.write(`${records.join('\n')}\n`);
      }),
    );
}

function find(ctx: CommandContext, transactionId: number): Transaction {
  const found = new Site({ db: ctx.db, config: () => ctx.config }).transactions.byId(transactionId);
  if (!found) throw new CliError(`no transaction ${transactionId} in the database`, EXIT_FAILURE);
  return found;
}
