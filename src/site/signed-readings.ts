import type { KeyObject } from 'node:crypto';
import {
  meterKeyHex,
  parseMeterPublicKey,
  signedEnergyWh,
  verifySignedValue,
  type SignedMeterValue,
} from '../meter-signatures/index.js';
import { statement, type Database } from '../store/index.js';
import type { SignedMeterValuePayload } from './events.js';
import { instantOr } from './input-bounds.js';
import type { SiteContext } from './site-context.js';

/**
 * docs/operating/security.md#security: what one transaction keeps of signed readings. A Begin and an End per measurand and a signed
 * sample every 15 minutes for a day fit; a station sending more has the rest dropped with a warning, never refused.
 */
export const MAX_SIGNED_BEGIN_END_PER_TRANSACTION = 16;
export const MAX_SIGNED_SAMPLES_PER_TRANSACTION = 200;
/** Characters per field of a reading: an OCMF record with its key is well under 2 KB. */
export const MAX_SIGNED_READING_CHARS = 8192;

const BEGIN = 'Transaction.Begin';
const END = 'Transaction.End';

/** A signed reading as a station sent it (docs/partners/signed-meter-values.md#signed-meter-values). */
export interface SignedReadingInput extends SignedMeterValue {
  /** The OCPP reading context (Transaction.Begin, Sample.Periodic, Transaction.End, ...). */
  context: string;
  timestamp: Date;
  connectorId: number;
  /** OCPP 1.6: the SampledValue's value exactly as sent (the whitepaper's JSON, or a bare record). */
  asReceived?: string;
}

/** A kept signed reading. */
export interface SignedReading extends SignedMeterValue {
  id: number;
  transactionId: number | null;
  stationId: string;
  connectorId: number;
  context: string;
  /** ISO, UTC. */
  timestamp: string;
  asReceived: string | null;
  verified: boolean | null;
  againstPinnedKey: boolean;
  receivedAt: string;
}

/** What became of the signed readings of one station message, for the log. */
export interface KeptReadings {
  stationId: string;
  transactionId: number | null;
  kept: number;
  /** Beyond the bounds above. */
  dropped: Array<{ context: string; why: string }>;
  /** Kept with verified false, and why. */
  unverified: Array<{ context: string; problem: string; againstPinnedKey: boolean }>;
  /** Kept with verified null: the key the station sent is in no form read. */
  unreadableKeys: Array<{ context: string; problem: string }>;
}

/** Who a reading belongs to: a transaction, or a 2.0.1 station's transaction no event has named the driver of yet. */
export type ReadingOwner =
  | { stationId: string; transactionId: number; stationTransactionId?: undefined }
  | { stationId: string; transactionId?: undefined; stationTransactionId: string };

const COLUMNS = `id, transaction_id AS transactionId, station_id AS stationId, connector_id AS connectorId, context,
  timestamp, signed_meter_data AS signedMeterData, signing_method AS signingMethod, encoding_method AS encodingMethod,
  public_key AS publicKey, as_received AS asReceived, verified, against_pinned_key AS againstPinnedKey,
  received_at AS receivedAt`;

type Row = Omit<SignedReading, 'verified' | 'againstPinnedKey'> & { verified: 0 | 1 | null; againstPinnedKey: 0 | 1 };

/** The readings of an owner (named parameters: transactionId, stationId, stationTransactionId). */
const OWNED_BY = `(transaction_id = @transactionId OR (@transactionId IS NULL AND transaction_id IS NULL
  AND station_id = @stationId AND station_transaction_id = @stationTransactionId))`;

const ownerParams = (owner: ReadingOwner) => ({
  transactionId: owner.transactionId ?? null,
  stationId: owner.stationId,
  stationTransactionId: owner.stationTransactionId ?? null,
});

const readingOf = (row: Row): SignedReading => ({
  ...row,
  verified: row.verified === null ? null : row.verified === 1,
  againstPinnedKey: row.againstPinnedKey === 1,
});

/**
 * Signed meter readings (docs/partners/signed-meter-values.md#signed-meter-values): kept as received with their transaction, in the commit of
 * the station's call, checked when they arrive against the installer's pinned keys (config and CLI together) or
 * else the key the station sent, and gone with their transaction (ON DELETE CASCADE when it is pruned).
 */
export class SignedReadings {
  private readonly keptListeners = new Set<(kept: KeptReadings) => void>();
  private readonly configKeys = new Map<string, KeyObject>();
  /**
   * The open transactions that may have signed readings: those the database had when first asked, and each one a
   * reading was kept or claimed for since (more than that is harmless: it costs one query). Most transactions have
   * none, and every stop asked the database (issue 47). Read again after a write was undone.
   */
  private withReadings: Set<number> | undefined;

  constructor(private readonly ctx: SiteContext) {
    ctx.writer.onUndone(() => (this.withReadings = undefined));
  }

  /** Tells listener, once committed, what became of each message's signed readings (the daemon logs it). */
  onKept(listener: (kept: KeptReadings) => void): () => void {
    this.keptListeners.add(listener);
    return () => this.keptListeners.delete(listener);
  }

  /** Keeps a message's signed readings for their owner; call inside the commit of the station's call. */
  keep(owner: ReadingOwner, readings: readonly SignedReadingInput[]): KeptReadings {
    const report: KeptReadings = {
      stationId: owner.stationId,
      transactionId: owner.transactionId ?? null,
      kept: 0,
      dropped: [],
      unverified: [],
      unreadableKeys: [],
    };
    if (readings.length === 0) return report;
    if (owner.transactionId !== undefined) this.withReadings?.add(owner.transactionId);
    const pinned = this.pinnedKeys(owner.stationId);
    const now = this.ctx.now();
    for (const reading of readings) {
      const why = this.beyondBounds(owner, reading);
      if (why) {
        report.dropped.push({ context: reading.context, why });
        continue;
      }
      const verdict = verifySignedValue(reading, {
        pinned,
        fallbackKey: reading.publicKey ? null : this.lastKeySent(owner),
      });
      const againstPinnedKey = verdict.againstPinnedKey === true;
      if (verdict.verified === false)
        report.unverified.push({
          context: reading.context,
          problem: verdict.problem ?? 'does not verify',
          againstPinnedKey,
        });
      else if (verdict.verified === null && verdict.problem)
        report.unreadableKeys.push({ context: reading.context, problem: verdict.problem });
      statement(
        this.ctx.db,
        `INSERT INTO signed_readings (transaction_id, station_id, station_transaction_id, connector_id, context, timestamp,
           signed_meter_data, signing_method, encoding_method, public_key, as_received, verified, against_pinned_key, received_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        owner.transactionId ?? null,
        owner.stationId,
        owner.stationTransactionId ?? null,
        reading.connectorId,
        reading.context,
        instantOr(reading.timestamp, now).toISOString(),
        reading.signedMeterData,
        reading.signingMethod,
        reading.encodingMethod,
        reading.publicKey,
        reading.asReceived ?? null,
        verdict.verified === null ? null : verdict.verified ? 1 : 0,
        againstPinnedKey ? 1 : 0,
        now.toISOString(),
      );
      report.kept += 1;
    }
    this.tellKept(report);
    return report;
  }

  /** A 2.0.1 transaction now has its id: the readings sent before any event named its driver are its own. */
  claim(stationId: string, stationTransactionId: string, transactionId: number): void {
    this.withReadings?.add(transactionId);
    statement(
      this.ctx.db,
      'UPDATE signed_readings SET transaction_id = ? WHERE station_id = ? AND station_transaction_id = ? AND transaction_id IS NULL',
    ).run(transactionId, stationId, stationTransactionId);
  }

  /** Readings of a 2.0.1 transaction that ended (or was superseded) before any event named its driver: not billed. */
  forgetUnclaimed(stationId: string, stationTransactionId: string): void {
    statement(
      this.ctx.db,
      'DELETE FROM signed_readings WHERE station_id = ? AND station_transaction_id = ? AND transaction_id IS NULL',
    ).run(stationId, stationTransactionId);
  }

  ofTransaction(transactionId: number): SignedReading[] {
    return signedReadingsOf(this.ctx.db, transactionId);
  }

  /** ofTransaction for an open transaction that is closing (call inside the write that closes it). */
  ofClosing(transactionId: number): SignedReading[] {
    // The closing one is stopped already in this write: it is asked after by id.
    this.withReadings ??= new Set(
      statement<[number], number>(this.ctx.db, OPEN_WITH_READINGS).pluck().all(transactionId),
    );
    if (!this.withReadings.delete(transactionId)) return [];
    return signedReadingsOf(this.ctx.db, transactionId);
  }

  /** The keys pinned for a station's meters: the config's and those `station meter-key` stored, together. */
  pinnedKeys(stationId: string): KeyObject[] {
    const fromConfig = this.ctx
      .config()
      .sites.flatMap((s) => s.stations)
      .filter((s) => s.id === stationId)
      .flatMap((s) => s.meterPublicKeys);
    const keys = fromConfig.map((text) => {
      let key = this.configKeys.get(text);
      if (!key) this.configKeys.set(text, (key = parseMeterPublicKey(text)));
      return key;
    });
    const stored = statement<[string], string>(
      this.ctx.db,
      'SELECT public_key FROM meter_key_pins WHERE station_id = ? ORDER BY pinned_at',
    )
      .pluck()
      .all(stationId);
    return [...keys, ...stored.map((hex) => parseMeterPublicKey(hex))];
  }

  /** Pins a meter key for a station (docs/partners/signed-meter-values.md#signed-meter-values); returns its hex form. Repeats change nothing. */
  pin(stationId: string, keyText: string): string {
    const hex = meterKeyHex(parseMeterPublicKey(keyText));
    this.ctx.commit(() =>
      statement(
        this.ctx.db,
        'INSERT OR IGNORE INTO meter_key_pins (station_id, public_key, pinned_at) VALUES (?, ?, ?)',
      ).run(stationId, hex, this.ctx.now().toISOString()),
    );
    return hex;
  }

  /** Removes a pin `pin` stored; false when there was none. */
  unpin(stationId: string, keyText: string): boolean {
    const hex = meterKeyHex(parseMeterPublicKey(keyText));
    return this.ctx.commit(
      () =>
        statement(this.ctx.db, 'DELETE FROM meter_key_pins WHERE station_id = ? AND public_key = ?').run(stationId, hex)
          .changes > 0,
    );
  }

  /** The keys `pin` stored, per station. */
  storedPins(): Array<{ stationId: string; publicKey: string; pinnedAt: string }> {
    return statement<[], { stationId: string; publicKey: string; pinnedAt: string }>(
      this.ctx.db,
      'SELECT station_id AS stationId, public_key AS publicKey, pinned_at AS pinnedAt FROM meter_key_pins ORDER BY station_id, pinned_at',
    ).all();
  }

  /** Stations with readings that failed a pinned key since `since` (GET /health, docs/partners/signed-meter-values.md#signed-meter-values). */
  pinnedKeyFailures(since: Date): Array<{ stationId: string; readings: number; last: string }> {
    return statement<[string], { stationId: string; readings: number; last: string }>(
      this.ctx.db,
      `SELECT station_id AS stationId, COUNT(*) AS readings, MAX(received_at) AS last FROM signed_readings
        WHERE against_pinned_key = 1 AND verified = 0 AND received_at >= ? GROUP BY station_id ORDER BY station_id`,
    ).all(since.toISOString());
  }

  private beyondBounds(owner: ReadingOwner, reading: SignedReadingInput): string | undefined {
    const longest = Math.max(
      ...[reading.signedMeterData, reading.signingMethod, reading.encodingMethod, reading.publicKey, reading.asReceived]
        .filter((s) => typeof s === 'string')
        .map((s) => s.length),
    );
    if (longest > MAX_SIGNED_READING_CHARS) return `longer than ${MAX_SIGNED_READING_CHARS} characters`;
    const beginOrEnd = reading.context === BEGIN || reading.context === END;
    const limit = beginOrEnd ? MAX_SIGNED_BEGIN_END_PER_TRANSACTION : MAX_SIGNED_SAMPLES_PER_TRANSACTION;
    const counted = statement<[ReturnType<typeof ownerParams> & { beginOrEnd: number }], number>(
      this.ctx.db,
      `SELECT COUNT(*) FROM signed_readings
        WHERE ${OWNED_BY}
          AND (context IN ('${BEGIN}', '${END}')) = @beginOrEnd`,
    )
      .pluck()
      .get({ ...ownerParams(owner), beginOrEnd: beginOrEnd ? 1 : 0 })!;
    if (counted >= limit)
      return `the transaction already has ${limit} ${beginOrEnd ? 'signed Begin/End' : 'signed periodic'} readings`;
    return undefined;
  }

  /** The key the station sent last with a reading of this transaction: 2.0.1 may send it once per transaction. */
  private lastKeySent(owner: ReadingOwner): string | null {
    return (
      statement<[ReturnType<typeof ownerParams>], string>(
        this.ctx.db,
        `SELECT public_key FROM signed_readings
          WHERE ${OWNED_BY}
            AND public_key IS NOT NULL AND public_key != '' ORDER BY id DESC LIMIT 1`,
      )
        .pluck()
        .get(ownerParams(owner)) ?? null
    );
  }

  private tellKept(report: KeptReadings): void {
    if (this.keptListeners.size === 0) return;
    const tell = () => this.keptListeners.forEach((listener) => listener(report));
    this.ctx.writer.committed().then(
      () => setImmediate(tell),
      () => undefined,
    );
  }
}

const OPEN_WITH_READINGS = `SELECT DISTINCT r.transaction_id FROM signed_readings r JOIN transactions t ON t.id = r.transaction_id
  WHERE t.stopped_at IS NULL OR t.id = ?`;
const OF_TRANSACTION = `SELECT ${COLUMNS} FROM signed_readings WHERE transaction_id = ? ORDER BY id`;

/** The signed readings kept for a transaction, in the order they arrived. */
export function signedReadingsOf(db: Database, transactionId: number): SignedReading[] {
  return statement<[number], Row>(db, OF_TRANSACTION).all(transactionId).map(readingOf);
}

/**
 * A kept reading as partners read it (docs/partners/signed-meter-values.md#signed-meter-values): `consistent` compares a signed Begin or End
 * value with the transaction's meterStart or meterStop, where the record states one.
 */
export function signedMeterValuePayload(
  reading: SignedReading,
  transaction: { meterStartWh: number; meterStopWh: number | null },
  zoned: (at: Date) => string,
): SignedMeterValuePayload {
  const billed =
    reading.context === BEGIN ? transaction.meterStartWh : reading.context === END ? transaction.meterStopWh : null;
  const signed = billed === null ? undefined : signedEnergyWh(reading, reading.context === BEGIN ? 'B' : 'E');
  return {
    context: reading.context,
    timestamp: zoned(new Date(reading.timestamp)),
    encodingMethod: reading.encodingMethod,
    signingMethod: reading.signingMethod,
    signedMeterData: reading.signedMeterData,
    publicKey: reading.publicKey,
    verified: reading.verified,
    ...(signed && billed !== null && { consistent: Math.abs(signed.wh - billed) <= signed.toleranceWh }),
  };
}

/** Which kept readings StopTransaction carries (webhookDelivery.signedMeterValues). */
export function carriedReadings(readings: SignedReading[], mode: 'beginEnd' | 'all' | 'none'): SignedReading[] {
  if (mode === 'none') return [];
  return mode === 'all' ? readings : readings.filter((r) => r.context === BEGIN || r.context === END);
}
