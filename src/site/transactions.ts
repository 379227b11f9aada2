import { statement } from '../store/index.js';
import type { Authorizations } from './authorizations.js';
import type { ConnectorRef, Connectors, ConnectorStatusChange } from './connectors.js';
import { checkCurrentA, checkEnergyWh, checkInstant, OutOfBoundsError } from './input-bounds.js';
import {
  whToKWh,
  type AuthorizationStatus,
  type StartTransactionPayload,
  type StopReason,
  type StopTransactionPayload,
} from './events.js';
import {
  carriedReadings,
  signedMeterValuePayload,
  type SignedReadingInput,
  type SignedReadings,
} from './signed-readings.js';
import type { MeterReadingInput, MeterReadings } from './meter-readings.js';
import { OpenTransactions } from './open-transactions.js';
import type { SiteContext } from './site-context.js';

/** A charging session, OCPP or Modbus, as the domain keeps it. Energy in Wh, times as stored (ISO, UTC). */
export interface Transaction {
  id: number;
  siteId: string;
  stationId: string;
  chargePointId: string;
  connectorId: number;
  idTag: string;
  meterStartWh: number;
  startedAt: string;
  reservationId: number | null;
  source: 'ocpp' | 'modbus';
  meterStopWh: number | null;
  stoppedAt: string | null;
  stopReason: string | null;
  stopIdTag: string | null;
  /** An OCPP 2.0.1 station's own id for the transaction (its TransactionEvents name it); null for 1.6 and Modbus. */
  stationTransactionId: string | null;
}

/** The columns of `transactions` as a Transaction: one list, so a column rename touches this file only. */
export const TRANSACTION_COLUMNS = `id, site_id AS siteId, station_id AS stationId, charge_point_id AS chargePointId, connector_id AS connectorId,
  id_tag AS idTag, meter_start_wh AS meterStartWh, started_at AS startedAt, reservation_id AS reservationId, source,
  meter_stop_wh AS meterStopWh, stopped_at AS stoppedAt, stop_reason AS stopReason, stop_id_tag AS stopIdTag,
  station_transaction_id AS stationTransactionId`;

// Each query's text once: a statement is looked up by its SQL, and a text built on every call is hashed on every call.
const BY_ID = `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE id = ?`;
const OF_STATION = `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE id = ? AND station_id = ?`;
const BY_STATION_TRANSACTION_ID = `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE station_id = ? AND station_transaction_id = ?`;
const ANSWERED_START = `SELECT ${TRANSACTION_COLUMNS} FROM transactions
  WHERE station_id = ? AND connector_id = ? AND started_at = ? AND id_tag = ? AND meter_start_wh = ? ORDER BY id DESC LIMIT 1`;
const OPEN = `SELECT ${TRANSACTION_COLUMNS} FROM transactions WHERE stopped_at IS NULL ORDER BY id`;
const LATEST_START = 'SELECT MAX(started_at) FROM transactions WHERE station_id = ? AND connector_id = ?';

export interface StartTransactionInput {
  at: ConnectorRef;
  idTag: string;
  meterStartWh: number;
  startedAt: Date;
  reservationId?: number;
  source: 'ocpp' | 'modbus';
  /** An OCPP 2.0.1 station's own id for it. */
  stationTransactionId?: string;
  /** The tag's status re-evaluated at start; emits the post-start Authorize event. Absent for Modbus sessions. */
  authorizationStatus?: AuthorizationStatus;
  connectorStatus?: ConnectorStatusChange;
  /** Register readings the start came with (docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear), kept in its commit. */
  readings?: readonly MeterReadingInput[];
}

/** A transaction an OCPP 2.0.1 station began before any event named its driver (a cable plugged in first). */
export interface StartWithoutDriver {
  connectorId: number;
  startedAt: Date;
  /** The station's energy register at the start, if its Started event carried one. */
  meterStartWh: number | null;
}

export interface StopTransactionInput {
  /** The station (or meter) asking: a transaction is stopped only by the one that started it. */
  stationId: string;
  transactionId: number;
  meterStopWh: number;
  stoppedAt: Date;
  reason?: StopReason;
  idTag?: string;
  connectorStatus?: ConnectorStatusChange;
  /** Signed readings that came with the stop (1.6 transactionData, a 2.0.1 Ended event): kept before it closes. */
  signedReadings?: readonly SignedReadingInput[];
  /** Register readings that came with the stop: kept before it closes. */
  readings?: readonly MeterReadingInput[];
}

/**
 * Transactions: opened with a never-reused id, closed once, by the station (or meter) that opened it; each change
 * with its StartTransaction or StopTransaction event (and the connector status it causes) in one commit.
 */
export class Transactions {
  constructor(
    private readonly ctx: SiteContext,
    private readonly connectors: Connectors,
    private readonly authorizations: Authorizations,
    private readonly signedReadings: SignedReadings,
    private readonly meterReadings: MeterReadings,
  ) {
    ctx.writer.onUndone(() => this.opened.forget());
  }

  /** The open transactions, beside their rows: what the stations' calls ask after most. */
  private readonly opened = new OpenTransactions<Transaction>({
    open: () =>
      statement<[], Transaction>(this.ctx.db, OPEN)
        .all()
        .map((row) => Object.freeze(row)),
    latestStart: (stationId, connectorId) =>
      statement<[string, number], string | null>(this.ctx.db, LATEST_START).pluck().get(stationId, connectorId) ?? null,
  });

  private readonly openedOrClosedListeners = new Set<(transactionId: number) => void>();
  /**
   * What the car of each open transaction draws per phase (A), as its station last reported, and when: it only steers
   * load sharing, which needs the latest and nothing older, so it stays in memory and goes with the transaction.
   */
  private readonly drawn = new Map<number, { currentA: number; atMs: number }>();

  /**
   * Tells listener of every start and stop, by transaction id, once committed and answered: load management shares
   * anew on them, and a station refuses a TxProfile naming a transaction it has not yet been told the id of (OCPP 1.6
   * §5.16). Returns the unsubscribe.
   */
  onOpenedOrClosed(listener: (transactionId: number) => void): () => void {
    this.openedOrClosedListeners.add(listener);
    return () => this.openedOrClosedListeners.delete(listener);
  }

  /**
   * Opens a transaction and emits StartTransaction (and the post-start Authorize). A transaction still open on the
   * connector is closed first (reason Other, meterStop = the new meterStart): a station that lost track of it would
   * otherwise leave it open for ever.
   */
  start(input: StartTransactionInput): Transaction {
    const { at } = input;
    // Connector 0 is the whole station: a transaction there would hold its tag for ever (nothing ever ends it).
    if (at.connectorId < 1)
      throw new OutOfBoundsError(`connector ${at.connectorId}: a transaction needs connector 1 or more`);
    checkEnergyWh('meter start', input.meterStartWh);
    checkInstant('start time', input.startedAt);
    const started = this.ctx.commit(() => {
      const zombie = this.openOn(at.stationId, at.connectorId);
      if (zombie) this.close(zombie, { meterStopWh: input.meterStartWh, stoppedAt: input.startedAt, reason: 'Other' });
      const { lastInsertRowid } = statement(
        this.ctx.db,
        `INSERT INTO transactions (site_id, station_id, charge_point_id, connector_id, id_tag, meter_start_wh, started_at, reservation_id, source, station_transaction_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        at.siteId,
        at.stationId,
        at.chargePointId,
        at.connectorId,
        input.idTag,
        input.meterStartWh,
        input.startedAt.toISOString(),
        input.reservationId ?? null,
        input.source,
        input.stationTransactionId ?? null,
      );
      // The row as just inserted: reading it back cost a query on every start.
      const transaction: Transaction = Object.freeze({
        id: Number(lastInsertRowid),
        siteId: at.siteId,
        stationId: at.stationId,
        chargePointId: at.chargePointId,
        connectorId: at.connectorId,
        idTag: input.idTag,
        meterStartWh: input.meterStartWh,
        startedAt: input.startedAt.toISOString(),
        reservationId: input.reservationId ?? null,
        source: input.source,
        meterStopWh: null,
        stoppedAt: null,
        stopReason: null,
        stopIdTag: null,
        stationTransactionId: input.stationTransactionId ?? null,
      });
      this.opened.opened(transaction);
      // A 2.0.1 start: whatever began on this connector without a driver is now this transaction, or over.
      if (input.stationTransactionId !== undefined) {
        this.forgetStartsWithoutDriver(at.stationId, at.connectorId, input.stationTransactionId);
        statement(
          this.ctx.db,
          'DELETE FROM transaction_starts_without_driver WHERE station_id = ? AND connector_id = ?',
        ).run(at.stationId, at.connectorId);
        this.signedReadings.claim(at.stationId, input.stationTransactionId, transaction.id);
      }
      if (input.readings) this.meterReadings.keep(transaction.id, input.readings);
      const payload: StartTransactionPayload = {
        stationId: at.stationId,
        chargePointId: at.chargePointId,
        connectorId: at.connectorId,
        idTag: input.idTag,
        meterStart: whToKWh(input.meterStartWh),
        transactionId: transaction.id,
        ...(input.reservationId !== undefined && { reservationId: String(input.reservationId) }),
        startedAt: this.ctx.zoned(input.startedAt),
      };
      this.ctx.emit(
        { eventType: 'StartTransaction', siteId: at.siteId, payload, occurredAt: input.startedAt },
        this.ctx.now(),
      );
      if (input.authorizationStatus)
        this.authorizations.write(at.stationId, input.idTag, input.authorizationStatus, at.connectorId, at);
      if (input.connectorStatus)
        this.connectors.write(at, input.connectorStatus.status, input.connectorStatus.errorCode);
      return transaction;
    });
    this.tellOpenedOrClosed(started.id);
    return started;
  }

  /**
   * Remembers a transaction a station began before any event named its driver, until one does (start() on its
   * connector takes it up) or it ends (forgetStartWithoutDriver): the bill starts from its start time and meter
   * reading, which a reconnect or a restart in between must not lose. A repeat keeps the first; a newer start on the
   * same connector replaces it (a connector has one session at a time, and this bounds the rows).
   */
  noteStartWithoutDriver(stationId: string, stationTransactionId: string, start: StartWithoutDriver): void {
    if (start.meterStartWh !== null) checkEnergyWh('meter start', start.meterStartWh);
    checkInstant('start time', start.startedAt);
    this.ctx.commit(() => {
      this.forgetStartsWithoutDriver(stationId, start.connectorId, stationTransactionId);
      statement(
        this.ctx.db,
        'INSERT OR IGNORE INTO transaction_starts_without_driver (station_id, station_transaction_id, connector_id, started_at, meter_start_wh) VALUES (?, ?, ?, ?, ?)',
      ).run(stationId, stationTransactionId, start.connectorId, start.startedAt.toISOString(), start.meterStartWh);
    });
  }

  /** What noteStartWithoutDriver kept for this transaction, until a start takes it up or it is forgotten. */
  beganWithoutDriver(stationId: string, stationTransactionId: string): StartWithoutDriver | undefined {
    const row = statement<[string, string], { connectorId: number; startedAt: string; meterStartWh: number | null }>(
      this.ctx.db,
      'SELECT connector_id AS connectorId, started_at AS startedAt, meter_start_wh AS meterStartWh FROM transaction_starts_without_driver WHERE station_id = ? AND station_transaction_id = ?',
    ).get(stationId, stationTransactionId);
    return row && { ...row, startedAt: new Date(row.startedAt) };
  }

  /** The transaction ended before any event named its driver: nothing was billed, nothing is kept. */
  forgetStartWithoutDriver(stationId: string, stationTransactionId: string): void {
    this.ctx.commit(() => {
      this.signedReadings.forgetUnclaimed(stationId, stationTransactionId);
      statement(
        this.ctx.db,
        'DELETE FROM transaction_starts_without_driver WHERE station_id = ? AND station_transaction_id = ?',
      ).run(stationId, stationTransactionId);
    });
  }

  /** Other starts without a driver on a connector, and their readings: a connector has one session at a time. */
  private forgetStartsWithoutDriver(stationId: string, connectorId: number, except: string): void {
    const superseded = statement<[string, number, string], string>(
      this.ctx.db,
      'SELECT station_transaction_id FROM transaction_starts_without_driver WHERE station_id = ? AND connector_id = ? AND station_transaction_id != ?',
    )
      .pluck()
      .all(stationId, connectorId, except);
    for (const id of superseded) this.signedReadings.forgetUnclaimed(stationId, id);
    statement(
      this.ctx.db,
      'DELETE FROM transaction_starts_without_driver WHERE station_id = ? AND connector_id = ? AND station_transaction_id != ?',
    ).run(stationId, connectorId, except);
  }

  /**
   * Keeps the readings a station sent outside a start or stop (docs/partners/signed-meter-values.md#signed-meter-values): for `transactionId`
   * when given, else for the transaction open on the connector (a 1.6 Begin reading in MeterValues right after
   * StartTransaction names none). Returns that transaction (the uplink queues the message under it); undefined, and
   * nothing kept, when neither is this station's.
   */
  keepReadings(
    at: { stationId: string; connectorId: number; transactionId?: number },
    readings: { signed?: readonly SignedReadingInput[]; plain?: readonly MeterReadingInput[] },
  ): Transaction | undefined {
    const { signed = [], plain = [] } = readings;
    const transaction =
      at.transactionId !== undefined
        ? this.ofStation(at.stationId, at.transactionId)
        : this.openOn(at.stationId, at.connectorId);
    if (!transaction || (signed.length === 0 && plain.length === 0)) return transaction;
    this.ctx.commit(() => {
      if (signed.length > 0)
        this.signedReadings.keep({ stationId: at.stationId, transactionId: transaction.id }, signed);
      this.meterReadings.keep(transaction.id, plain);
    });
    return transaction;
  }

  /**
   * Keeps signed readings of a 2.0.1 transaction no event has named the driver of yet: its start takes them up,
   * its end without one forgets them.
   */
  keepUnclaimedSignedReadings(
    stationId: string,
    stationTransactionId: string,
    readings: readonly SignedReadingInput[],
  ): void {
    if (readings.length === 0) return;
    this.ctx.commit(() => this.signedReadings.keep({ stationId, stationTransactionId }, readings));
  }

  /**
   * Closes a transaction and emits StopTransaction. An unknown or already closed id, or one another station
   * started, changes nothing and emits nothing (a station repeating a StopTransaction whose answer it lost must not
   * bill twice; one station must not end another's session); returns undefined.
   */
  stop(input: StopTransactionInput): Transaction | undefined {
    checkEnergyWh('meter stop', input.meterStopWh);
    checkInstant('stop time', input.stoppedAt);
    const stopped = this.ctx.commit(() => {
      const open = this.ofStation(input.stationId, input.transactionId);
      if (!open || open.stoppedAt !== null) return undefined;
      if (input.signedReadings)
        this.signedReadings.keep({ stationId: open.stationId, transactionId: open.id }, input.signedReadings);
      if (input.readings) this.meterReadings.keep(open.id, input.readings);
      return this.close(open, input);
    });
    if (stopped) this.tellOpenedOrClosed(stopped.id);
    return stopped;
  }

  private tellOpenedOrClosed(transactionId: number): void {
    if (this.openedOrClosedListeners.size === 0) return;
    // The answer leaves as the commit resolves (microtasks); an immediate runs after it.
    const tell = () => this.openedOrClosedListeners.forEach((listener) => listener(transactionId));
    this.ctx.writer.committed().then(
      () => setImmediate(tell),
      () => undefined,
    );
  }

  /** Notes what the car of an open transaction draws now, per phase (docs/configuration/circuits.md#circuits-load-management). */
  noteDrawn(transactionId: number, currentA: number): void {
    // On the monotonic clock load management steps on: it tells a report that came after a raise from one before.
    this.drawn.set(transactionId, { currentA: checkCurrentA('Current.Import', currentA), atMs: performance.now() });
  }

  /**
   * A connector's status from its station: one that is not Charging (a car or station pausing, finishing) draws
   * nothing now, whatever its car last reported; kept, that report would hide as much other load.
   */
  noteConnectorStatus(stationId: string, connectorId: number, status: string): void {
    if (status === 'Charging' || this.drawn.size === 0) return;
    const open = this.openOn(stationId, connectorId);
    if (open) this.drawn.delete(open.id);
  }

  /** What the car of an open transaction last drew per phase, if its station said, and when it said so. */
  reportedDraw(transactionId: number): { currentA: number; atMs: number } | undefined {
    return this.drawn.get(transactionId);
  }

  byId(transactionId: number): Transaction | undefined {
    return this.opened.byId(transactionId) ?? statement<[number], Transaction>(this.ctx.db, BY_ID).get(transactionId);
  }

  /** The transaction with this id if `stationId` started it: how a station (or meter) names its own. */
  ofStation(stationId: string, transactionId: number): Transaction | undefined {
    const open = this.opened.byId(transactionId);
    if (open) return open.stationId === stationId ? open : undefined;
    return statement<[number, string], Transaction>(this.ctx.db, OF_STATION).get(transactionId, stationId);
  }

  /** The transaction an OCPP 2.0.1 station knows by its own id. */
  byStationTransactionId(stationId: string, stationTransactionId: string): Transaction | undefined {
    return statement<[string, string], Transaction>(this.ctx.db, BY_STATION_TRANSACTION_ID).get(
      stationId,
      stationTransactionId,
    );
  }

  /** The transaction a StartTransaction with exactly these fields already opened (open or since stopped), if any. */
  answeredStart(
    stationId: string,
    connectorId: number,
    idTag: string,
    meterStartWh: number,
    startedAt: Date,
  ): Transaction | undefined {
    const at = startedAt.toISOString();
    // A new session starts after every earlier one on its connector: no query for it.
    if (!this.opened.mayHaveStartedAt(stationId, connectorId, at)) return undefined;
    return statement<[string, number, string, string, number], Transaction>(this.ctx.db, ANSWERED_START).get(
      stationId,
      connectorId,
      at,
      idTag,
      meterStartWh,
    );
  }

  /** The open transactions of the tag, oldest first. */
  openOfTag(idTag: string): Transaction[] {
    return this.opened.ofTag(idTag);
  }

  /** The newest open transaction on the connector. */
  openOn(stationId: string, connectorId: number): Transaction | undefined {
    return this.opened.on(stationId, connectorId);
  }

  /** Every open transaction, oldest first. */
  open(): Transaction[] {
    return this.opened.all();
  }

  /**
   * A stop time before the start (a station clock set back) is taken as the start: partners never see a negative
   * duration.
   */
  private close(open: Transaction, stop: Omit<StopTransactionInput, 'stationId' | 'transactionId'>): Transaction {
    this.drawn.delete(open.id);
    const startedAt = new Date(open.startedAt);
    const input = stop.stoppedAt < startedAt ? { ...stop, stoppedAt: startedAt } : stop;
    const closed: Transaction = Object.freeze({
      ...open,
      meterStopWh: input.meterStopWh,
      stoppedAt: input.stoppedAt.toISOString(),
      stopReason: input.reason ?? null,
      stopIdTag: input.idTag ?? null,
    });
    statement(
      this.ctx.db,
      'UPDATE transactions SET meter_stop_wh = ?, stopped_at = ?, stop_reason = ?, stop_id_tag = ? WHERE id = ?',
    ).run(closed.meterStopWh, closed.stoppedAt, closed.stopReason, closed.stopIdTag, open.id);
    this.opened.closed(open);
    const payload: StopTransactionPayload = {
      stationId: open.stationId,
      chargePointId: open.chargePointId,
      connectorId: open.connectorId,
      idTag: input.idTag ?? open.idTag,
      meterStart: whToKWh(open.meterStartWh),
      meterStop: whToKWh(input.meterStopWh),
      transactionId: open.id,
      ...(input.reason !== undefined && input.reason !== 'Local' && { reason: input.reason }),
      startedAt: this.ctx.zoned(startedAt),
      stoppedAt: this.ctx.zoned(input.stoppedAt),
    };
    const signed = carriedReadings(
      this.signedReadings.ofClosing(open.id),
      this.ctx.config().webhookDelivery.signedMeterValues,
    );
    if (signed.length > 0) {
      const billed = { meterStartWh: open.meterStartWh, meterStopWh: input.meterStopWh };
      payload.signedMeterValues = signed.map((r) => signedMeterValuePayload(r, billed, (at) => this.ctx.zoned(at)));
    }
    this.ctx.emit(
      { eventType: 'StopTransaction', siteId: open.siteId, payload, occurredAt: input.stoppedAt },
      this.ctx.now(),
    );
    const at = {
      siteId: open.siteId,
      stationId: open.stationId,
      chargePointId: open.chargePointId,
      connectorId: open.connectorId,
    };
    if (input.connectorStatus) this.connectors.write(at, input.connectorStatus.status, input.connectorStatus.errorCode);
    return closed;
  }
}
