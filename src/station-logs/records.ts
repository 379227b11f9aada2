import { statement, type Writer } from '../store/index.js';

/** Where a log collection is (contract 11.3): asked, accepted by the station, bytes coming, file here, done. */
export type LogState = 'requested' | 'accepted' | 'uploading' | 'received' | 'uploaded' | 'failed';

/** Still waiting for the station or its upload. */
export const OPEN_STATES: readonly LogState[] = ['requested', 'accepted', 'uploading', 'received'];

/** One log collection as the API and the CLI show it. */
export interface LogRecord {
  logId: string;
  stationId: string;
  who: string;
  via: 'http' | 'ftp';
  since: string | null;
  requestId: number;
  requestedAt: string;
  state: LogState;
  /** Why it failed, as the station or chargegate said it. */
  reason: string | null;
  /** The file kept, once it arrived; `removed` says why it is no longer there (logs.maxTotalBytes, retainDays). */
  file: { name: string; bytes: number; removed: string | null } | null;
  updatedAt: string;
}

interface Row {
  id: string;
  station_id: string;
  who: string;
  via: 'http' | 'ftp';
  since: string | null;
  request_id: number;
  requested_at: string;
  state: LogState;
  reason: string | null;
  file_name: string | null;
  bytes: number | null;
  file_removed: string | null;
  updated_at: string;
}

const COLUMNS = `id, station_id, who, via, since, request_id, requested_at, state, reason, file_name, bytes, file_removed,
  updated_at`;

/** The log collections in the database: each change of state one write (one SQLite transaction). */
export class LogRecords {
  constructor(private readonly writer: Writer) {}

  insert(record: Omit<LogRecord, 'state' | 'reason' | 'file' | 'updatedAt'>): void {
    this.writer.write(() =>
      statement(
        this.writer.db,
        `INSERT INTO station_logs (id, station_id, who, via, since, request_id, requested_at, state, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'requested', ?)`,
      ).run(
        record.logId,
        record.stationId,
        record.who,
        record.via,
        record.since,
        record.requestId,
        record.requestedAt,
        record.requestedAt,
      ),
    );
  }

  /**
   * Moves a collection that is in one of `from` (the open states unless said) to `state`, with a reason or the file
   * that arrived, in one write; false when it was elsewhere.
   */
  change(
    logId: string,
    state: LogState,
    at: string,
    detail: { reason?: string; file?: { name: string; bytes: number } } = {},
    from: readonly LogState[] = OPEN_STATES,
  ): boolean {
    return this.writer.write(
      () =>
        statement(
          this.writer.db,
          `UPDATE station_logs SET state = ?, updated_at = ?, reason = coalesce(?, reason),
             file_name = coalesce(?, file_name), bytes = coalesce(?, bytes)
           WHERE id = ? AND state IN (${from.map(() => '?').join(', ')})`,
        ).run(state, at, detail.reason ?? null, detail.file?.name ?? null, detail.file?.bytes ?? null, logId, ...from)
          .changes === 1,
    );
  }

  /** Forgets a collection that never reached its station. */
  remove(logId: string): void {
    this.writer.write(() => statement(this.writer.db, 'DELETE FROM station_logs WHERE id = ?').run(logId));
  }

  /** Notes why a collection's file is gone. */
  fileRemoved(logIds: string[], why: string, at: string): void {
    if (logIds.length === 0) return;
    this.writer.write(() => {
      for (const logId of logIds)
        statement(this.writer.db, 'UPDATE station_logs SET file_removed = ?, updated_at = ? WHERE id = ?').run(
          why,
          at,
          logId,
        );
    });
  }

  get(logId: string): LogRecord | undefined {
    const row = statement<[string], Row>(this.writer.db, `SELECT ${COLUMNS} FROM station_logs WHERE id = ?`).get(logId);
    return row && recordOf(row);
  }

  /** The collections a daemon stopped before they ended (the next start fails them). */
  open(): LogRecord[] {
    return statement<[], Row>(
      this.writer.db,
      `SELECT ${COLUMNS} FROM station_logs WHERE state IN ('requested', 'accepted', 'uploading', 'received')`,
    )
      .all()
      .map(recordOf);
  }

  /** Deletes the finished collections asked for before `before` (RFC 3339); returns how many. */
  deleteFinishedBefore(before: string): number {
    const db = this.writer.db;
    const old = statement<[string], number>(
      db,
      `SELECT count(*) FROM station_logs WHERE requested_at < ? AND state IN ('uploaded', 'failed')`,
    )
      .pluck()
      .get(before);
    // Nothing written while nothing is old enough.
    if (!old) return 0;
    return this.writer.write(
      () =>
        statement(db, `DELETE FROM station_logs WHERE requested_at < ? AND state IN ('uploaded', 'failed')`).run(before)
          .changes,
    );
  }
}

function recordOf(row: Row): LogRecord {
  return {
    logId: row.id,
    stationId: row.station_id,
    who: row.who,
    via: row.via,
    since: row.since,
    requestId: row.request_id,
    requestedAt: row.requested_at,
    state: row.state,
    reason: row.reason,
    file: row.file_name === null ? null : { name: row.file_name, bytes: row.bytes ?? 0, removed: row.file_removed },
    updatedAt: row.updated_at,
  };
}
