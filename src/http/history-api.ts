import type { FastifyPluginAsync } from 'fastify';
import { reaches, reachScope } from '../applications/index.js';
import type { Config, Permission } from '../config/index.js';
import { eventsAfter } from '../outbox/index.js';
import { transactionHistory, transactionRecord, transactionWithReadings } from '../site/index.js';
import type { Database } from '../store/index.js';
import { envelopeOf } from '../webhooks/index.js';
import {
  eventsQuerySchema,
  parseRequest,
  transactionParamsSchema,
  transactionsQuerySchema,
  type eventPageSchema,
  type transactionDetailSchema,
  type transactionSchema,
} from './api-schemas.js';
import { ApiError } from './http-errors.js';
import type { BearerAuth, Caller } from './bearer-auth.js';
import type { z } from 'zod';

export interface HistoryApiOptions {
  db: Database;
  auth: BearerAuth;
  config: () => Config;
  now?: () => Date;
}

/** Rows looked at per GET /events answer at most: an application that reaches little still gets a bounded answer. */
const EVENTS_SCAN_FACTOR = 10;

/**
 * Catch-up and history (docs/partners/index.md#for-partners): GET /events replays the committed events in order from a cursor, so a
 * partner back from an outage longer than the retry schedule needs nobody on site; GET /transactions is the
 * session history to reconcile billing against. Both show only what the application's groups reach.
 */
export function historyApiRoutes(options: HistoryApiOptions): FastifyPluginAsync {
  const { db, auth, config } = options;
  const now = options.now ?? (() => new Date());
  const reachable = (
    caller: Caller,
    permission: Permission,
    at: { siteId: string; stationId: string; chargePointId: string },
  ) => reaches(caller.grants, permission, config().company.id, at);

  return async (app) => {
    app.get('/events', async (request): Promise<z.output<typeof eventPageSchema>> => {
      const caller = await auth.authenticate(request, 'events:read');
      const query = parseRequest(eventsQuerySchema, request.query, 'query');
      const { timezone } = config();
      let cursor = Number(query.after || 0);
      const events: z.output<typeof eventPageSchema>['events'] = [];
      const sentAt = now();
      // The cursor moves past events the caller does not reach too, so paging always makes progress.
      for (const event of eventsAfter(db, cursor, query.limit * EVENTS_SCAN_FACTOR)) {
        cursor = event.seq;
        const envelope = envelopeOf(event, sentAt, timezone);
        const { stationId, chargePointId } = envelope.payload as { stationId?: string; chargePointId?: string };
        if (
          !reachable(caller, 'events:read', {
            siteId: event.siteId,
            stationId: stationId ?? '',
            chargePointId: chargePointId ?? '',
          })
        )
          continue;
        events.push({ cursor: String(event.seq), ...envelope });
        if (events.length === query.limit) break;
      }
      return { events, cursor: String(cursor) };
    });

    app.get('/transactions', async (request): Promise<Array<z.output<typeof transactionSchema>>> => {
      const caller = await auth.authenticate(request, 'charge-points:read');
      const query = parseRequest(transactionsQuerySchema, request.query, 'query');
      const { timezone, company } = config();
      // Reach is part of the one query, so a page is full unless the history ends: a short page means the end.
      const scope = reachScope(caller.grants, 'charge-points:read', company.id);
      const rows = transactionHistory(db, {
        ...(query.from !== undefined && { from: new Date(query.from) }),
        ...(query.to !== undefined && { to: new Date(query.to) }),
        ...(query.status !== undefined && { status: query.status }),
        ...(scope !== 'everything' && { within: scope }),
        afterId: query.after ?? 0,
        limit: query.limit,
      });
      return rows.map((t) => transactionRecord(t, timezone));
    });

    // docs/partners/signed-meter-values.md#signed-meter-values: one transaction with every signed reading kept for it. One outside the
    // application's groups is not found, as the list leaves it out.
    app.get('/transactions/:transactionId', async (request): Promise<z.output<typeof transactionDetailSchema>> => {
      const caller = await auth.authenticate(request, 'charge-points:read');
      const { transactionId } = parseRequest(transactionParamsSchema, request.params, 'path');
      const { timezone, company } = config();
      const scope = reachScope(caller.grants, 'charge-points:read', company.id);
      const [transaction] = transactionHistory(db, {
        ...(scope !== 'everything' && { within: scope }),
        afterId: transactionId - 1,
        limit: 1,
      });
      if (transaction?.id !== transactionId)
        throw new ApiError(404, 'not_found', `no transaction ${transactionId} the application reaches`);
      return transactionWithReadings(db, transaction, timezone);
    });
  };
}
