import { statement, type Writer } from '../store/index.js';

/** Contract 11.1: how many operations each station keeps. */
export const OPERATIONS_KEPT = 50;

/** A station's answer to an operation, as the API and the CLI's --json show it. */
export interface OperationAnswer {
  stationId: string;
  /** The OCPP action sent (or, for a 2.0.1 `config get` without keys, NotifyReport: the report it read). */
  action: string;
  status: string;
  statusInfo?: { reasonCode: string; additionalInfo?: string };
  result?: unknown;
}

/** One operation as recorded: who asked what, and the station's answer or why there was none. */
export interface OperationRecord {
  at: string;
  /** `cli` or the API client id. */
  who: string;
  action: string;
  request: object;
  /** The station's status (a read's result is not kept). */
  answer: Pick<OperationAnswer, 'status' | 'statusInfo'> | null;
  error: { kind: 'offline' | 'timeout' | 'error'; message: string } | null;
}

interface Row {
  at: string;
  who: string;
  action: string;
  request: string;
  answer: string | null;
  error: string | null;
}

/** The last OPERATIONS_KEPT operations of each station, in the database (a daemon restart keeps them). */
export class OperationAudit {
  constructor(private readonly writer: Writer) {}

  record(stationId: string, record: OperationRecord): void {
    const { db } = this.writer;
    this.writer.write(() => {
      statement(
        db,
        'INSERT INTO station_operations (station_id, at, who, action, request, answer, error) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ).run(
        stationId,
        record.at,
        record.who,
        record.action,
        JSON.stringify(record.request),
        record.answer && JSON.stringify(record.answer),
        record.error && JSON.stringify(record.error),
      );
      // In the same write: the table never holds more than OPERATIONS_KEPT (+1 during it) per station.
      statement(
        db,
        `DELETE FROM station_operations WHERE station_id = ? AND id <= (
           SELECT id FROM station_operations WHERE station_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
      ).run(stationId, stationId, OPERATIONS_KEPT);
    });
  }

  /** The station's kept operations, newest first. */
  last(stationId: string): OperationRecord[] {
    return statement<[string, number], Row>(
      this.writer.db,
      'SELECT at, who, action, request, answer, error FROM station_operations WHERE station_id = ? ORDER BY id DESC LIMIT ?',
    )
      .all(stationId, OPERATIONS_KEPT)
      .map((row) => ({
        at: row.at,
        who: row.who,
        action: row.action,
        request: JSON.parse(row.request) as object,
        answer: row.answer === null ? null : (JSON.parse(row.answer) as OperationRecord['answer']),
        error: row.error === null ? null : (JSON.parse(row.error) as OperationRecord['error']),
      }));
  }
}
