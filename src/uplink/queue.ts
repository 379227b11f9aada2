import { messageOf, type Logger } from '../log/index.js';
import type { ForwardedMessage } from '../ocpp/index.js';
import { statement, type Database, type GroupCommit } from '../store/index.js';
import { isDroppableReading, isDroppableTransactionEvent } from './periodic-readings.js';

/** A message waiting in a station's queue, as the station sent it (a 1.6 transactionId in it is chargegate's). */
export interface QueuedMessage {
  id: number;
  /** The OCPP version the station sent it in. */
  protocol: string;
  action: string;
  payload: Record<string, unknown>;
  transactionId: number | null;
  queuedAt: string;
  /** How many times the CSMS answered it with a CALLERROR saying it is wrong. */
  refusals: number;
  /** Its payload's size as stored (UTF-8 JSON): what it counts toward queueBytesLimit. */
  bytes: number;
}

/** How much one station's queue may hold (docs/design/uplink.md#uplink-what-the-csms-sees); read at each append, so a reload applies. */
export interface QueueLimits {
  messages: number;
  bytes: number;
}

/** The size of a payload as the queue stores it, in SQL: LENGTH of the text is characters, of a BLOB bytes. */
const PAYLOAD_BYTES = 'LENGTH(CAST(payload AS BLOB))';

export interface QueueStats {
  queued: number;
  oldestQueuedAt: string | null;
}

/** Acknowledged rows and the CSMS's transaction ids not yet written: one unsynced write per batch. */
const ACK_BATCH = 100;
const ACK_FLUSH_MS = 500;
/** A batch the disk refused is tried again this much later (the store's health already says why). */
const RETRY_FLUSH_MS = 5000;

/**
 * Each station's durable queue of messages for the CSMS (docs/design/uplink.md#uplink-what-the-csms-sees), on the daemon's one writer. A
 * row is written in the commit of the station call it forwards (append, inside that write); a drain sends only rows
 * whose commit succeeded, and acknowledged rows are deleted in batches, unsynced: a crash costs a repeat, never a loss.
 */
export class UplinkQueue {
  private readonly db: Database;
  /** Rows and their payload bytes per station, kept here so the limits cost no COUNT or SUM per message. */
  private readonly sizes = new Map<string, { messages: number; bytes: number }>();
  /** The highest row id per station whose commit succeeded: a drain never sends what may still be undone. */
  private readonly committedUpTo = new Map<string, number>();
  private readonly acked: number[] = [];
  /**
   * Per station, the highest row answered or dropped: rows go in order, so every row up to it is delivered, its delete
   * maybe not yet written. The limit never drops one of those, and a new link of the station never sends them again.
   */
  private readonly answeredUpTo = new Map<string, number>();
  /**
   * Per station, the row its link is sending: not answered yet, but the CSMS may already hold it, so the limit never
   * drops it (docs/design/uplink.md#uplink-what-the-csms-sees).
   */
  private readonly inFlight = new Map<string, number>();
  /** chargegate's transaction id -> the CSMS's (null: its start was dropped), not yet written. */
  private readonly mapped = new Map<number, { stationId: string; csmsTransactionId: number | null }>();
  private readonly dropped = new Map<string, number>();
  /**
   * The last row id given. Ids must only grow in a process (the links' cursors and the marks above count on it), but
   * SQLite gives a new row the largest id left plus one: once the answered rows are deleted, an id below a cursor.
   */
  private lastId = 0;
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly writer: GroupCommit,
    private readonly limits: () => QueueLimits,
    /** Told once a station's appended rows have committed: its link may send them. */
    private readonly committed: (stationId: string) => void,
    private readonly log: Logger,
  ) {
    this.db = writer.db;
    this.reload();
  }

  /** Stations with rows waiting (a restart delivers them even if the station stays away). */
  stationsWithBacklog(): string[] {
    return [...this.sizes.entries()].filter(([, size]) => size.messages > 0).map(([stationId]) => stationId);
  }

  /**
   * Appends a message; call inside the write of the change it came from. Past either limit, the station's oldest
   * periodic or clock-aligned readings not yet sent go until it fits (this one too, if need be); starts, stops, signed
   * readings and security events never do.
   */
  append(stationId: string, protocol: string, message: ForwardedMessage, now: Date): void {
    const droppable =
      (message.action === 'MeterValues' && isDroppableReading(message.payload)) ||
      (message.action === 'TransactionEvent' && isDroppableTransactionEvent(message.payload));
    const id = this.lastId + 1;
    const payload = JSON.stringify(message.payload);
    statement(
      this.db,
      'INSERT INTO uplink_queue (id, station_id, protocol, action, payload, transaction_id, droppable, queued_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(
      id,
      stationId,
      protocol,
      message.action,
      payload,
      message.transactionId ?? null,
      droppable ? 1 : 0,
      now.toISOString(),
    );
    this.lastId = id;
    const size = this.sizeOf(stationId);
    size.messages += 1;
    size.bytes += Buffer.byteLength(payload);
    this.dropPast(stationId, size);
    this.writer.committed().then(
      () => {
        this.committedUpTo.set(stationId, Math.max(this.committedUpTo.get(stationId) ?? 0, id));
        this.committed(stationId);
      },
      // Undone with the change it came from: the sizes are read again.
      () => this.reload(),
    );
  }

  /**
   * The oldest droppable rows not yet answered nor being sent, deleted while the station's queue is past a limit; it
   * stays past it when none is left (what never goes is never dropped). Inside append's write.
   */
  private dropPast(stationId: string, size: { messages: number; bytes: number }): void {
    const { messages, bytes } = this.limits();
    const after = Math.max(this.answeredUpTo.get(stationId) ?? 0, this.inFlight.get(stationId) ?? 0);
    let dropped = 0;
    while (size.messages > messages || size.bytes > bytes) {
      const oldest = statement<[string, number], { id: number; bytes: number }>(
        this.db,
        `SELECT id, ${PAYLOAD_BYTES} AS bytes FROM uplink_queue WHERE station_id = ? AND droppable = 1 AND id > ? ORDER BY id LIMIT 1`,
      ).get(stationId, after);
      if (!oldest) break;
      statement(this.db, 'DELETE FROM uplink_queue WHERE id = ?').run(oldest.id);
      size.messages -= 1;
      size.bytes -= oldest.bytes;
      dropped += 1;
    }
    if (dropped > 0) this.countDroppedNow(stationId, dropped);
  }

  /** The payload bytes of the station's rows not yet answered. */
  bytesQueued(stationId: string): number {
    return this.sizes.get(stationId)?.bytes ?? 0;
  }

  /** The station's first committed row after `afterId` not yet answered, in order. */
  next(stationId: string, afterId: number): QueuedMessage | undefined {
    const upTo = this.committedUpTo.get(stationId) ?? 0;
    const after = Math.max(afterId, this.answeredUpTo.get(stationId) ?? 0);
    const row = statement<[string, number, number], Omit<QueuedMessage, 'payload'> & { payload: string }>(
      this.db,
      `SELECT id, protocol, action, payload, transaction_id AS transactionId, queued_at AS queuedAt, refusals, ${PAYLOAD_BYTES} AS bytes
         FROM uplink_queue WHERE station_id = ? AND id > ? AND id <= ? ORDER BY id LIMIT 1`,
    ).get(stationId, after, upTo);
    return row && { ...row, payload: JSON.parse(row.payload) as Record<string, unknown> };
  }

  /** The link sends the row until `delivery` settles; meanwhile the limit leaves it alone. */
  async whileSending<T>(stationId: string, id: number, delivery: () => Promise<T>): Promise<T> {
    this.inFlight.set(stationId, id);
    try {
      return await delivery();
    } finally {
      // A reload's new link may be sending by now: its mark stays.
      if (this.inFlight.get(stationId) === id) this.inFlight.delete(stationId);
    }
  }

  /** The OCPP version of the station's oldest row: a backlog's link speaks it while the station stays away. */
  protocolOf(stationId: string): string | undefined {
    return (
      statement<[string], string>(this.db, 'SELECT protocol FROM uplink_queue WHERE station_id = ? ORDER BY id LIMIT 1')
        .pluck()
        .get(stationId) ?? undefined
    );
  }

  /** The CSMS answered the row (or it was dropped): deleted with the next batch. */
  acknowledge(stationId: string, { id, bytes }: Pick<QueuedMessage, 'id' | 'bytes'>): void {
    this.acked.push(id);
    this.answeredUpTo.set(stationId, Math.max(this.answeredUpTo.get(stationId) ?? 0, id));
    const size = this.sizeOf(stationId);
    size.messages = Math.max(0, size.messages - 1);
    size.bytes = Math.max(0, size.bytes - bytes);
    this.scheduleFlush();
  }

  /**
   * The CSMS answered the row with a CALLERROR: counted at once, unsynced (a power loss costs an attempt more). A disk
   * that refuses it leaves the count to this process.
   */
  refused(id: number): void {
    try {
      this.writer.writeUnsynced(() =>
        statement(this.db, 'UPDATE uplink_queue SET refusals = refusals + 1 WHERE id = ?').run(id),
      );
    } catch (err) {
      this.log.warn({ error: messageOf(err) }, 'uplink refusal count not written: counted in this process only');
    }
  }

  /** A row the CSMS refused too often, or whose transaction it never learnt of: gone, and counted. */
  drop(stationId: string, message: Pick<QueuedMessage, 'id' | 'bytes'>): void {
    this.dropped.set(stationId, (this.dropped.get(stationId) ?? 0) + 1);
    this.acknowledge(stationId, message);
  }

  /** The CSMS's id for a transaction (null: its start was dropped); undefined when it never heard of it. */
  csmsTransactionId(transactionId: number): number | null | undefined {
    const pending = this.mapped.get(transactionId);
    if (pending) return pending.csmsTransactionId;
    const row = statement<[number], { csms: number | null }>(
      this.db,
      'SELECT csms_transaction_id AS csms FROM uplink_transactions WHERE transaction_id = ?',
    ).get(transactionId);
    return row ? row.csms : undefined;
  }

  /** chargegate's id of the transaction the CSMS knows as csmsTransactionId on this station. */
  transactionIdOf(stationId: string, csmsTransactionId: number): number | undefined {
    for (const [transactionId, m] of this.mapped)
      if (m.stationId === stationId && m.csmsTransactionId === csmsTransactionId) return transactionId;
    return (
      statement<[string, number], number>(
        this.db,
        'SELECT transaction_id FROM uplink_transactions WHERE station_id = ? AND csms_transaction_id = ? ORDER BY transaction_id DESC LIMIT 1',
      )
        .pluck()
        .get(stationId, csmsTransactionId) ?? undefined
    );
  }

  /** The CSMS's id for a transaction it answered the start of; null when the start was dropped. */
  map(stationId: string, transactionId: number, csmsTransactionId: number | null): void {
    this.mapped.set(transactionId, { stationId, csmsTransactionId });
    this.scheduleFlush();
  }

  /** Per station: rows waiting and the oldest one's time. */
  stats(): Map<string, QueueStats> {
    return queueStats(this.db, this.acked);
  }

  /** Messages dropped per station since the database was made, with those not yet written. */
  droppedCounts(): Map<string, number> {
    const counts = droppedCounts(this.db);
    for (const [stationId, n] of this.dropped) counts.set(stationId, (counts.get(stationId) ?? 0) + n);
    return counts;
  }

  /** Writes what is pending (acknowledged rows, transaction ids, drop counts) in one unsynced write. */
  flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.acked.length === 0 && this.mapped.size === 0 && this.dropped.size === 0) return;
    const acked = this.acked.splice(0);
    const mapped = [...this.mapped];
    const dropped = [...this.dropped];
    this.mapped.clear();
    this.dropped.clear();
    // Lost on power loss, the batch costs the CSMS repeats of messages it has, never one it lacks.
    try {
      this.writer.writeUnsynced(() => {
        statement(this.db, 'DELETE FROM uplink_queue WHERE id IN (SELECT value FROM json_each(?))').run(
          JSON.stringify(acked),
        );
        for (const [transactionId, m] of mapped)
          statement(
            this.db,
            `INSERT OR REPLACE INTO uplink_transactions (transaction_id, station_id, csms_transaction_id)
             SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM transactions WHERE id = ?)`,
          ).run(transactionId, m.stationId, m.csmsTransactionId, transactionId);
        for (const [stationId, n] of dropped) this.countDroppedNow(stationId, n);
      });
    } catch (err) {
      return this.keepForNextBatch({ acked, mapped, dropped }, err);
    }
    this.writer.committed().catch((err: unknown) => this.keepForNextBatch({ acked, mapped, dropped }, err));
  }

  /**
   * A batch the disk did not take (full, failing) goes back to memory and is tried again: a CSMS transaction id lost
   * here would drop that transaction's StopTransaction as one the CSMS never heard of.
   */
  private keepForNextBatch(
    batch: {
      acked: number[];
      mapped: Array<[number, { stationId: string; csmsTransactionId: number | null }]>;
      dropped: Array<[string, number]>;
    },
    err: unknown,
  ): void {
    this.log.warn({ error: messageOf(err) }, 'uplink bookkeeping not written: kept for the next batch');
    this.acked.push(...batch.acked);
    for (const [transactionId, m] of batch.mapped)
      if (!this.mapped.has(transactionId)) this.mapped.set(transactionId, m);
    for (const [stationId, n] of batch.dropped) this.dropped.set(stationId, (this.dropped.get(stationId) ?? 0) + n);
    this.flushTimer ??= setTimeout(() => this.flush(), RETRY_FLUSH_MS).unref();
  }

  private countDroppedNow(stationId: string, n: number): void {
    statement(
      this.db,
      'INSERT INTO uplink_dropped (station_id, dropped) VALUES (?, ?) ON CONFLICT (station_id) DO UPDATE SET dropped = dropped + excluded.dropped',
    ).run(stationId, n);
  }

  private scheduleFlush(): void {
    if (this.acked.length >= ACK_BATCH) return this.flush();
    this.flushTimer ??= setTimeout(() => this.flush(), ACK_FLUSH_MS);
  }

  /** The station's rows and bytes not yet answered, as kept here. */
  private sizeOf(stationId: string): { messages: number; bytes: number } {
    let size = this.sizes.get(stationId);
    if (!size) this.sizes.set(stationId, (size = { messages: 0, bytes: 0 }));
    return size;
  }

  /** Sizes and committed rows as the database has them (at start, and after a commit failed). */
  private reload(): void {
    const rows = statement<[], { stationId: string; queued: number; bytes: number; last: number }>(
      this.db,
      `SELECT station_id AS stationId, COUNT(*) AS queued, SUM(${PAYLOAD_BYTES}) AS bytes, MAX(id) AS last
         FROM uplink_queue GROUP BY station_id`,
    ).all();
    this.sizes.clear();
    for (const r of rows) {
      this.lastId = Math.max(this.lastId, r.last);
      this.sizes.set(r.stationId, { messages: r.queued, bytes: r.bytes });
      this.committedUpTo.set(r.stationId, Math.max(this.committedUpTo.get(r.stationId) ?? 0, r.last));
    }
  }
}

/**
 * Per station: rows waiting and the oldest one's time, as written (`upstream status` without a running daemon), but the
 * rows answered and not yet deleted.
 */
export function queueStats(db: Database, answered: readonly number[] = []): Map<string, QueueStats> {
  const rows = statement<[string], { stationId: string; queued: number; oldest: string }>(
    db,
    `SELECT station_id AS stationId, COUNT(*) AS queued, MIN(queued_at) AS oldest FROM uplink_queue
      WHERE id NOT IN (SELECT value FROM json_each(?)) GROUP BY station_id`,
  ).all(JSON.stringify(answered));
  return new Map(rows.map((r) => [r.stationId, { queued: r.queued, oldestQueuedAt: r.oldest }]));
}

/** Messages dropped per station (the limit, refused every attempt, a dropped start), as written. */
export function droppedCounts(db: Database): Map<string, number> {
  const rows = statement<[], { stationId: string; dropped: number }>(
    db,
    'SELECT station_id AS stationId, dropped FROM uplink_dropped',
  ).all();
  return new Map(rows.map((r) => [r.stationId, r.dropped]));
}
