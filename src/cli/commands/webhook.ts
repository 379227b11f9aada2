import type { Command } from 'commander';
import type { Config, WebhookConfig, WebhookSignature } from '../../config/index.js';
import { worstLevel } from '../../health/index.js';
import { openKeystore } from '../../keystore/index.js';
import { DeliveryStore } from '../../outbox/index.js';
/** The webhooks folder brings undici and the delivery code: loaded by the commands that use it (faster CLI start). */
const webhooks = () => import('../../webhooks/index.js');
import { CliError, EXIT_FAILURE, EXIT_USAGE, output, table, withContext, type GlobalOptions } from '../context.js';

/** `chargegate webhook status|test`: what the delivery executors are doing, and a signed test request. */
export function registerWebhook(program: Command): void {
  const webhook = program.command('webhook').description('webhook delivery: executor status, signed test request');

  webhook
    .command('status')
    .description('per webhook and event type: queue size, last dequeue, last request time and duration, health level')
    .action((_options: unknown, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), async (ctx) => {
        const { ExecutorStatsStore, executorStatuses } = await webhooks();
        const deliveries = new DeliveryStore(ctx.db);
        const executors = executorStatuses(ctx.config, deliveries, new ExecutorStatsStore(ctx.db));
        const status = worstLevel(executors.map((e) => e.status));
        const deadLetters = deliveries.deadLetterCount();
        output(ctx.json, { status, deadLetters, executors }, () =>
          [
            table(
              [
                'SITE',
                'WEBHOOK',
                'EVENT TYPE',
                'ACTIVE',
                'QUEUE',
                'LAST DEQUEUE',
                'LAST REQUEST',
                'DURATION',
                'LAST STATUS',
                'LEVEL',
              ],
              executors.map((e) => [
                e.siteId,
                e.webhookId,
                e.eventType,
                e.active ? 'yes' : 'no',
                `${e.queueSize}/${e.queueCapacity}`,
                e.lastDequeueAt ?? '-',
                e.lastRequestAt ?? '-',
                e.lastRequestDurationMs === null ? '-' : `${Math.round(e.lastRequestDurationMs)} ms`,
                e.lastStatus === null ? (e.lastError ?? '-') : String(e.lastStatus),
                e.reasons.length > 0 ? `${e.status} (${e.reasons.join(', ')})` : e.status,
              ]),
            ),
            `overall: ${status}; dead letters: ${deadLetters}${deadLetters > 0 ? ' (chargegate deadletter list)' : ''}`,
          ].join('\n'),
        );
      }),
    );

  webhook
    .command('test')
    .description(
      'send one signed test request through the delivery code and print the answer: an envelope with "test": true, of an event type ' +
        'the webhook subscribes to (ChargePointStatus if it does), about station "chargegate-webhook-test" (not stored, never retried); ' +
        'exit 0 on a 2xx, 1 otherwise',
    )
    .argument('<webhookId>')
    .option('--site <siteId>', 'the site of the webhook, when several sites use the same webhook id')
    .action((webhookId: string, options: { site?: string }, cmd: Command) =>
      withContext(cmd.optsWithGlobals<GlobalOptions>(), async (ctx) => {
        const { siteId, webhook: target } = findWebhook(ctx.config, webhookId, options.site);
        const keystore = await openKeystore(ctx.config);
        const { sendTestEvent } = await webhooks();
        const { event, outcome } = await sendTestEvent(ctx.config, siteId, target, () => keystore.webhookSigningKeys());
        const result = {
          siteId,
          webhookId,
          url: target.url,
          eventId: event.eventId,
          eventType: event.eventType,
          requestId: outcome.requestId,
          delivered: outcome.delivered,
          status: outcome.status ?? null,
          durationMs: Math.round(outcome.durationMs),
          ...(outcome.error !== undefined && { error: outcome.error }),
          contentType: outcome.contentType ?? null,
          responseBody: outcome.responseBody,
        };
        output(ctx.json, result, () =>
          [
            `POST ${target.url} (${signatureName(target.signature)} signature, auth ${target.auth.type}) eventId ${event.eventId}, x-request-id ${outcome.requestId}`,
            outcome.status === undefined
              ? `no answer: ${outcome.error}`
              : `answer: HTTP ${outcome.status} in ${result.durationMs} ms${outcome.delivered ? ' (delivered)' : ' (would be retried)'}`,
            ...(outcome.responseBody ? [outcome.responseBody] : []),
          ].join('\n'),
        );
        if (!outcome.delivered) process.exitCode = EXIT_FAILURE;
      }),
    );
}

function findWebhook(
  config: Config,
  webhookId: string,
  siteId: string | undefined,
): { siteId: string; webhook: WebhookConfig } {
  const matches = config.sites
    .filter((s) => siteId === undefined || s.id === siteId)
    .flatMap((s) => s.webhooks.filter((w) => w.id === webhookId).map((webhook) => ({ siteId: s.id, webhook })));
  if (matches.length === 0)
    throw new CliError(
      `no webhook "${webhookId}"${siteId !== undefined ? ` in site "${siteId}"` : ''} in the config`,
      EXIT_FAILURE,
    );
  if (matches.length > 1)
    throw new CliError(
      `webhook "${webhookId}" exists in sites ${matches.map((m) => m.siteId).join(', ')}: name one with --site`,
      EXIT_USAGE,
    );
  return matches[0]!;
}

/** `documented`, or rfc9421 with its algorithm: what a partner's verifier must expect. */
function signatureName(signature: WebhookSignature): string {
  return signature.profile === 'documented' ? 'documented' : `rfc9421 ${signature.alg}`;
}
