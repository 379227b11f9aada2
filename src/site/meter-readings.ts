import { statement, type Database } from '../store/index.js';
import { whToKWh } from './events.js';
import { instantOr } from './input-bounds.js';
import type { SiteContext } from './site-context.js';

/**
 * docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear: a transaction keeps its Begin and End register readings and a periodic sample
 * at most every 15 minutes, at most 96 of them (a day); the oldest periodic one goes to make room for a newer.
 * Every kept sample is a synced write in the station's MeterValues commit, which otherwise writes nothing.
 */
export const MAX_BEGIN_END_READINGS_PER_TRANSACTION = 16;
export const MAX_PERIODIC_READINGS_PER_TRANSACTION = 96;
export const PERIODIC_READING_SPACING_MS = 15 * 60_000;

const BEGIN = 'Transaction.Begin';
const END = 'Transaction.End';

/** An Energy.Active.Import.Register reading (not a signed one) a station sent for a transaction. */
export interface MeterReadingInput {
  /** The OCPP reading context: Transaction.Begin, Transaction.End; any other is a sample, thinned. */
  context: string;
  timestamp: Date;
  energyWh: number;
}

/** A kept reading as partners read it (GET /transactions/{transactionId}). */
export interface MeterReadingPayload {
  context: string;
  /** The station's time of the reading, in the site's zone. */
  timestamp: string;
  /** kWh, as meterStart and meterStop. */
  energy: number;
}

/**
 * The plain register readings of transactions, kept in the commit of the station's call and gone with their
 * transaction (ON DELETE CASCADE when it is pruned).
 */
export class MeterReadings {
  constructor(private readonly ctx: SiteContext) {}

  /** Keeps what the bounds above allow of a message's readings; call inside the commit of the station's call. */
  keep(transactionId: number, readings: readonly MeterReadingInput[]): void {
    for (const reading of readings) {
      const at = instantOr(reading.timestamp, this.ctx.now());
      const keep =
        reading.context === BEGIN || reading.context === END
          ? this.beginEndCount(transactionId) < MAX_BEGIN_END_READINGS_PER_TRANSACTION
          : this.makeRoomForSample(transactionId, at);
      if (keep)
        statement(
          this.ctx.db,
          'INSERT INTO transaction_readings (transaction_id, context, timestamp, energy_wh) VALUES (?, ?, ?, ?)',
        ).run(transactionId, reading.context, at.toISOString(), reading.energyWh);
    }
  }

  private beginEndCount(transactionId: number): number {
    return statement<[number], number>(
      this.ctx.db,
      `SELECT COUNT(*) FROM transaction_readings WHERE transaction_id = ? AND context IN ('${BEGIN}', '${END}')`,
    )
      .pluck()
      .get(transactionId)!;
  }

  /**
   * Whether a sample taken at `at` is kept: not within the spacing after the last one kept (nor before it: a station
   * replaying its queue sends in order). At the limit the oldest sample is deleted to make room.
   */
  private makeRoomForSample(transactionId: number, at: Date): boolean {
    const samples = statement<[number], { id: number; timestamp: string }>(
      this.ctx.db,
      `SELECT id, timestamp FROM transaction_readings WHERE transaction_id = ? AND context NOT IN ('${BEGIN}', '${END}')
        ORDER BY id`,
    ).all(transactionId);
    const last = samples.at(-1);
    if (last && at.getTime() < Date.parse(last.timestamp) + PERIODIC_READING_SPACING_MS) return false;
    if (samples.length >= MAX_PERIODIC_READINGS_PER_TRANSACTION)
      statement(this.ctx.db, 'DELETE FROM transaction_readings WHERE id = ?').run(samples[0]!.id);
    return true;
  }
}

/** The plain readings kept for a transaction, in the order they arrived. */
export function meterReadingsOf(
  db: Database,
  transactionId: number,
  zoned: (at: Date) => string,
): MeterReadingPayload[] {
  return statement<[number], { context: string; timestamp: string; energyWh: number }>(
    db,
    'SELECT context, timestamp, energy_wh AS energyWh FROM transaction_readings WHERE transaction_id = ? ORDER BY id',
  )
    .all(transactionId)
    .map((r) => ({ context: r.context, timestamp: zoned(new Date(r.timestamp)), energy: whToKWh(r.energyWh) }));
}
