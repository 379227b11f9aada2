/** What the index needs of a transaction (Transaction has it). */
export interface IndexedTransaction {
  readonly id: number;
  readonly stationId: string;
  readonly connectorId: number;
  readonly idTag: string;
  /** As stored: an ISO time in UTC, which sorts as it compares. */
  readonly startedAt: string;
}

/** Where the index reads what it does not hold: the database, inside whatever write is open. */
export interface IndexSource<T> {
  /** Every open transaction, by id. */
  open(): T[];
  /** The latest start time of any transaction on the connector, open, stopped or pruned since; null for none. */
  latestStart(stationId: string, connectorId: number): string | null;
}

interface Loaded<T> {
  byId: Map<number, T>;
  byConnector: Map<string, T[]>;
  byTag: Map<string, T[]>;
}

/**
 * The open transactions and each connector's latest start, in memory beside the database: every StartTransaction,
 * StopTransaction and Authorize asks after them, and at 200 stations the queries were 11 % of the main thread (issue
 * 47). Changed in the same write as the rows (opened, closed), so it reads as the database does on the one connection
 * that writes transactions, uncommitted writes of the open group included. A write undone (a savepoint rolled back, a
 * group whose commit failed) makes it forget everything: it reads the database again at the next question.
 */
export class OpenTransactions<T extends IndexedTransaction> {
  private loaded: Loaded<T> | undefined;
  /** Per connector, its latest start (null: none yet), once asked. */
  private readonly latestStarts = new Map<string, string | null>();

  constructor(private readonly source: IndexSource<T>) {}

  /** The open transaction with this id, if it is open. */
  byId(id: number): T | undefined {
    return this.index().byId.get(id);
  }

  /** The newest open transaction on the connector. */
  on(stationId: string, connectorId: number): T | undefined {
    return this.index().byConnector.get(connectorKey(stationId, connectorId))?.at(-1);
  }

  /** The open transactions of the tag, oldest first. */
  ofTag(idTag: string): T[] {
    return [...(this.index().byTag.get(idTag) ?? [])];
  }

  /** Every open transaction, oldest first. */
  all(): T[] {
    return [...this.index().byId.values()];
  }

  /**
   * Whether a transaction started on the connector at `startedAt` (ISO, as stored) may exist: false when every start
   * the connector has had is earlier, as a new session's nearly always is (a station's clock moves forward).
   */
  mayHaveStartedAt(stationId: string, connectorId: number, startedAt: string): boolean {
    const key = connectorKey(stationId, connectorId);
    let latest = this.latestStarts.get(key);
    if (latest === undefined) this.latestStarts.set(key, (latest = this.source.latestStart(stationId, connectorId)));
    return latest !== null && startedAt <= latest;
  }

  /** A transaction was inserted in the write under way: its id is larger than any before it. */
  opened(transaction: T): void {
    const key = connectorKey(transaction.stationId, transaction.connectorId);
    const latest = this.latestStarts.get(key);
    if (latest !== undefined && (latest === null || transaction.startedAt > latest))
      this.latestStarts.set(key, transaction.startedAt);
    if (!this.loaded) return;
    this.loaded.byId.set(transaction.id, transaction);
    append(this.loaded.byConnector, key, transaction);
    append(this.loaded.byTag, transaction.idTag, transaction);
  }

  /** A transaction was closed in the write under way. */
  closed(transaction: T): void {
    if (!this.loaded?.byId.delete(transaction.id)) return;
    remove(this.loaded.byConnector, connectorKey(transaction.stationId, transaction.connectorId), transaction.id);
    remove(this.loaded.byTag, transaction.idTag, transaction.id);
  }

  /** Writes were undone: what is held may no longer be what the database says. */
  forget(): void {
    this.loaded = undefined;
    this.latestStarts.clear();
  }

  private index(): Loaded<T> {
    if (this.loaded) return this.loaded;
    const loaded: Loaded<T> = { byId: new Map(), byConnector: new Map(), byTag: new Map() };
    for (const transaction of this.source.open()) {
      loaded.byId.set(transaction.id, transaction);
      append(loaded.byConnector, connectorKey(transaction.stationId, transaction.connectorId), transaction);
      append(loaded.byTag, transaction.idTag, transaction);
    }
    return (this.loaded = loaded);
  }
}

function connectorKey(stationId: string, connectorId: number): string {
  return `${connectorId} ${stationId}`;
}

function append<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function remove<T extends { id: number }>(map: Map<string, T[]>, key: string, id: number): void {
  const list = map.get(key)?.filter((t) => t.id !== id);
  if (list?.length) map.set(key, list);
  else map.delete(key);
}
