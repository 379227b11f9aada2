import { statement, type Database } from '../store/index.js';
import type { SignedMeterValuePayload } from './events.js';
import { whToKWh } from './events.js';
import { meterReadingsOf, type MeterReadingPayload } from './meter-readings.js';
import { signedMeterValuePayload, signedReadingsOf } from './signed-readings.js';
import { TRANSACTION_COLUMNS, type Transaction } from './transactions.js';
import { formatZonedTimestamp } from '../time/index.js';

/** A transaction as partners read it (GET /transactions): kWh, times in the site's zone. */
export interface TransactionRecord {
  transactionId: number;
  stationId: string;
  chargePointId: string;
  connectorId: number;
  idTag: string;
  startedAt: string;
  stoppedAt: string | null;
  meterStart: number;
  meterStop: number | null;
  reason: string | null;
}

export function transactionRecord(t: Transaction, timeZone: string): TransactionRecord {
  return {
    transactionId: t.id,
    stationId: t.stationId,
    chargePointId: t.chargePointId,
    connectorId: t.connectorId,
    idTag: t.idTag,
    startedAt: formatZonedTimestamp(new Date(t.startedAt), timeZone),
    stoppedAt: t.stoppedAt === null ? null : formatZonedTimestamp(new Date(t.stoppedAt), timeZone),
    meterStart: whToKWh(t.meterStartWh),
    meterStop: t.meterStopWh === null ? null : whToKWh(t.meterStopWh),
    reason: t.stopReason,
  };
}

/**
 * A transaction with every reading kept for it, the plain register readings and the signed ones (GET
 * /transactions/{transactionId}, `chargegate transaction show`; docs/partners/signed-meter-values.md#signed-meter-values).
 */
export function transactionWithReadings(
  db: Database,
  t: Transaction,
  timeZone: string,
): TransactionRecord & { readings: MeterReadingPayload[]; signedMeterValues: SignedMeterValuePayload[] } {
  const zoned = (at: Date) => formatZonedTimestamp(at, timeZone);
  return {
    ...transactionRecord(t, timeZone),
    readings: meterReadingsOf(db, t.id, zoned),
    signedMeterValues: signedReadingsOf(db, t.id).map((r) => signedMeterValuePayload(r, t, zoned)),
  };
}

export interface TransactionFilter {
  /** Started at or after (inclusive). */
  from?: Date;
  /** Started before (exclusive). */
  to?: Date;
  status?: 'open' | 'stopped';
  /** Only transactions with a larger id: the next page after the last one seen. */
  afterId?: number;
  /** Only transactions at one of these sites, stations or charge points (an application's reach); absent: all. */
  within?: { siteIds: readonly string[]; stationIds: readonly string[]; chargePointIds: readonly string[] };
  limit: number;
}

interface HistoryParams {
  afterId: number;
  from: string;
  to: string | null;
  siteIds?: string;
  stationIds?: string;
  chargePointIds?: string;
  limit: number;
}

/**
 * Transactions in id order (the order they started in), for reconciliation (GET /transactions): one query a page,
 * reach included. Times are compared as instants: the stored ISO strings are all UTC with milliseconds, so they sort
 * as text (callers keep `from` and `to` within the years 0000-9999, whose ISO form has that shape).
 */
export function transactionHistory(db: Database, filter: TransactionFilter): Transaction[] {
  const status =
    filter.status === 'open'
      ? 'AND stopped_at IS NULL'
      : filter.status === 'stopped'
        ? 'AND stopped_at IS NOT NULL'
        : '';
  // The unary + keeps SQLite off any index on these columns: it walks the ids in order and stops when the page is
  // full, where an index would have it read and sort every reached row for each page.
  const within = filter.within
    ? `AND (+site_id IN (SELECT value FROM json_each(@siteIds)) OR +station_id IN (SELECT value FROM json_each(@stationIds))
         OR +charge_point_id IN (SELECT value FROM json_each(@chargePointIds)))`
    : '';
  return statement<[HistoryParams], Transaction>(
    db,
    `SELECT ${TRANSACTION_COLUMNS} FROM transactions
      WHERE id > @afterId AND started_at >= @from AND (@to IS NULL OR started_at < @to) ${status} ${within}
      ORDER BY id LIMIT @limit`,
  ).all({
    afterId: filter.afterId ?? 0,
    from: filter.from?.toISOString() ?? '',
    to: filter.to?.toISOString() ?? null,
    ...(filter.within && {
      siteIds: JSON.stringify(filter.within.siteIds),
      stationIds: JSON.stringify(filter.within.stationIds),
      chargePointIds: JSON.stringify(filter.within.chargePointIds),
    }),
    limit: filter.limit,
  });
}
