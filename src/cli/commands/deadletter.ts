import type { Command } from 'commander';
import { DeliveryStore } from '../../outbox/index.js';
import { formatZonedTimestamp } from '../../time/index.js';
/** The webhooks folder brings undici and the delivery code: loaded by `show` only (faster CLI start). */
const webhooks = () => import('../../webhooks/index.js');
import { CliError, EXIT_FAILURE, EXIT_USAGE, output, table, withContext, type GlobalOptions } from '../context.js';

/** `chargegate deadletter list|show|replay|discard`: events that exhausted their retries or found their queue full. */
export function registerDeadletter(program: Command): void {
  const deadletter = program
    .command('deadletter')
    .description('webhook dead letters: list, show, replay (same eventId, back in the queue), discard');

  deadletter
    .command('list')
    .description('deliveries that exhausted their retries or found their queue full, oldest first')
    .action((_options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        const deadLetters = new DeliveryStore(ctx.db).deadLetters();
        output(ctx.json, { deadLetters }, () =>
          table(
            [
              'EVENT ID',
              'EVENT TYPE',
              'SITE',
              'WEBHOOK',
              'REASON',
              'ATTEMPTS',
              'LAST STATUS',
              'DEAD SINCE',
              'LAST ERROR',
            ],
            deadLetters.map((d) => [
              d.eventId,
              d.eventType,
              d.siteId,
              d.webhookId,
              d.reason,
              String(d.attempts),
              d.lastStatus === null ? '-' : String(d.lastStatus),
              zoned(d.deadSince, ctx.config.timezone),
              d.lastError?.slice(0, 60) ?? '-',
            ]),
          ),
        );
      }),
    );

  deadletter
    .command('show')
    .description(
      'one dead event: the envelope its webhooks get (timestamp = when it was stored) and each dead delivery',
    )
    .argument('<eventId>')
    .action((eventId: string, _options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), async (ctx) => {
        const { envelopeBody } = await webhooks();
        const store = new DeliveryStore(ctx.db);
        const deliveries = store.deadLetters({ eventId });
        const event = store.event(eventId);
        if (deliveries.length === 0 || !event) throw new CliError(`no dead letter for event ${eventId}`, EXIT_FAILURE);
        const envelope = JSON.parse(envelopeBody(event, new Date(event.createdAt), ctx.config.timezone)) as object;
        output(ctx.json, { envelope, deliveries }, () =>
          [
            JSON.stringify(envelope, null, 2),
            table(
              ['WEBHOOK', 'REASON', 'ATTEMPTS', 'LAST STATUS', 'DEAD SINCE', 'LAST ERROR'],
              deliveries.map((d) => [
                d.webhookId,
                d.reason,
                String(d.attempts),
                d.lastStatus === null ? '-' : String(d.lastStatus),
                zoned(d.deadSince, ctx.config.timezone),
                d.lastError ?? '-',
              ]),
            ),
          ].join('\n'),
        );
      }),
    );

  deadletter
    .command('discard')
    .description('forget dead letters for good: their partners never get them (list or show them first)')
    .argument('[eventId]', 'the event to discard (all its dead deliveries)')
    .option('--all', 'discard every dead letter')
    .action((eventId: string | undefined, options: { all?: boolean }, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        const discarded = new DeliveryStore(ctx.db).discard(selection(eventId, options));
        if (eventId !== undefined && discarded === 0)
          throw new CliError(`no dead letter for event ${eventId}`, EXIT_FAILURE);
        output(ctx.json, { discarded }, () => `discarded ${discarded} dead deliver${discarded === 1 ? 'y' : 'ies'}`);
      }),
    );

  deadletter
    .command('replay')
    .description(
      'put dead letters back in their queues with the same eventId and a fresh retry budget; the running daemon sends them at once',
    )
    .argument('[eventId]', 'the event to replay (all its dead deliveries)')
    .option('--all', 'replay every dead letter')
    .action((eventId: string | undefined, options: { all?: boolean }, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), (ctx) => {
        const filter = selection(eventId, options);
        const store = new DeliveryStore(ctx.db);
        if (eventId !== undefined && store.deadLetters({ eventId }).length === 0)
          throw new CliError(`no dead letter for event ${eventId}`, EXIT_FAILURE);
        const result = store.replay(filter, ctx.config.webhookDelivery.queueCapacity, new Date());
        output(ctx.json, result, () =>
          [
            `replayed ${result.replayed} deliver${result.replayed === 1 ? 'y' : 'ies'}`,
            ...(result.queueFull > 0
              ? [
                  `${result.queueFull} left on the dead-letter list: their queue is full (capacity ${ctx.config.webhookDelivery.queueCapacity}); replay again once it drains`,
                ]
              : []),
          ].join('\n'),
        );
        if (result.queueFull > 0) process.exitCode = EXIT_FAILURE;
      }),
    );
}

/** discard and replay act on one event's dead letters or, with --all, on every one: exactly one of the two. */
function selection(eventId: string | undefined, options: { all?: boolean }): { eventId?: string } {
  if ((eventId === undefined) === (options.all !== true))
    throw new CliError('name one EVENT_ID or use --all', EXIT_USAGE);
  return eventId !== undefined ? { eventId } : {};
}

/** Tables show times in the site's zone, as `webhook status` and the envelopes do; --json keeps the stored UTC. */
function zoned(iso: string, timezone: string): string {
  return formatZonedTimestamp(new Date(iso), timezone);
}
