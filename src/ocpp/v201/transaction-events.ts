import type { AuthorizationDecision } from '../../authorization/index.js';
import type { MeterReadingInput, SignedReadingInput, Transaction } from '../../site/index.js';
import {
  stationTime,
  stopValue,
  warnIfStoppedBeforeStart,
  type CallHandler,
  type StationHandlerDeps,
} from '../call-handling.js';
import { rpcError } from '../rpc.js';
import type { ConnectionMemory } from './connection-memory.js';
import { noteDrawnCurrent } from '../drawn-current.js';
import {
  currentSamples,
  energyReadings,
  idTokenInfoOf,
  signedReadings,
  stopReasonOf,
  type ConnectorActivity,
} from './mapping.js';
import type { IdTokenInfoType, Ocpp201Actions, TransactionEventRequest } from './messages.js';

/** What a TransactionEvent handler works with: the station's connection and the domain. */
export interface TransactionEventContext {
  stationId: string;
  deps: Pick<StationHandlerDeps, 'site' | 'authorizer' | 'logger' | 'warn' | 'forwarder'>;
  memory: ConnectionMemory;
  /** Records the 1.6 status the EVSE's activity amounts to after `change` (the domain emits only a change). */
  reportStatus(evseId: number, change: Partial<ConnectorActivity>): void;
  /** True (and warned) for an EVSE of a configured station that the config does not list. */
  unconfigured(action: string, evseId: number): boolean;
}

/**
 * TransactionEvent onto the same transactions as 1.6 (docs/install/connecting-stations.md#ocpp-201-stations): the transaction opens with
 * the driver's token at the first event that carries one, and closes at Ended; `transactionId` is chargegate's
 * integer for the station's own id string. An event that changed something here goes into the uplink's queue
 * (docs/design/uplink.md#uplink-what-the-csms-sees) in the same commit as its writes.
 */
export function transactionEventHandler(ctx: TransactionEventContext): CallHandler<Ocpp201Actions, 'TransactionEvent'> {
  const { stationId, memory } = ctx;
  const { site, authorizer, logger: log, warn } = ctx.deps;

  const start = async (
    params: TransactionEventRequest,
    evseId: number,
    idToken: NonNullable<TransactionEventRequest['idToken']>,
    readings: readonly MeterReadingInput[],
  ): Promise<{ decision: AuthorizationDecision; transaction: Transaction }> => {
    const idTag = idToken.idToken;
    const stationTransactionId = params.transactionInfo.transactionId;
    // Begun before this event named the driver (a Started one without an idToken, perhaps on an earlier connection).
    const begun = site.transactions.beganWithoutDriver(stationId, stationTransactionId);
    // Checked before the authorizer asks a plugin or the CPO about a start that cannot be stored.
    const startedAt = begun?.startedAt ?? stationTime(params.timestamp);
    const energyWh = readings.at(-1)?.energyWh;
    // The held start's reading is the transaction's Begin reading, as a Started event's own would be.
    const beginReading =
      begun && begun.meterStartWh !== null
        ? [{ context: 'Transaction.Begin', timestamp: begun.startedAt, energyWh: begun.meterStartWh }]
        : [];
    const { decision, started } = await authorizer.authorizeStart(
      { idTag, stationId, connectorId: evseId, idTokenType: idToken.type },
      (settled) =>
        site.transactions.start({
          at: site.connectors.locate(stationId, evseId),
          idTag,
          meterStartWh: begun?.meterStartWh ?? energyWh ?? memory.energyOf(evseId) ?? 0,
          startedAt,
          ...(params.reservationId !== undefined && { reservationId: params.reservationId }),
          source: 'ocpp',
          stationTransactionId,
          authorizationStatus: settled.status,
          readings: [...beginReading, ...readings],
        }),
    );
    log.info(
      { transactionId: started.id, stationTransactionId, evseId, status: decision.status },
      'transaction started',
    );
    return { decision, transaction: started };
  };

  const stop = (
    params: TransactionEventRequest,
    transaction: Transaction,
    readings: readonly MeterReadingInput[],
    signed: readonly SignedReadingInput[],
  ): void => {
    const stoppedAt = stopValue(
      'timestamp',
      () => stationTime(params.timestamp),
      () => new Date(),
      warn,
    );
    const energyWh = readings.at(-1)?.energyWh;
    const stopped = site.transactions.stop({
      stationId,
      transactionId: transaction.id,
      meterStopWh: energyWh ?? memory.energyOf(transaction.connectorId) ?? transaction.meterStartWh,
      stoppedAt,
      reason: stopReasonOf(params.transactionInfo.stoppedReason),
      ...(params.idToken !== undefined && { idTag: params.idToken.idToken }),
      ...(signed.length > 0 && { signedReadings: signed }),
      ...(readings.length > 0 && { readings }),
    });
    if (!stopped) return;
    log.info(
      { transactionId: stopped.id, stationTransactionId: stopped.stationTransactionId, reason: stopped.stopReason },
      'transaction stopped',
    );
    warnIfStoppedBeforeStart(stopped, stoppedAt, warn);
  };

  return async (params) => {
    const { transactionInfo, eventType } = params;
    const stationTransactionId = transactionInfo.transactionId;
    let transaction = site.transactions.byStationTransactionId(stationId, stationTransactionId);
    const evseId =
      params.evse?.id ??
      memory.evseOf(stationTransactionId) ??
      transaction?.connectorId ??
      site.transactions.beganWithoutDriver(stationId, stationTransactionId)?.connectorId;
    if (evseId === undefined) {
      warn(
        { stationTransactionId, eventType, seqNo: params.seqNo },
        'TransactionEvent names no EVSE and none is known for its transaction: answered, no event',
      );
      return {};
    }
    // EVSE 0 is the whole station, as connector 0 is in 1.6: a transaction there would hold its tag for ever.
    if (evseId === 0) throw rpcError('PropertyConstraintViolation', 'evse.id must be 1 or more for a transaction');
    if (ctx.unconfigured('TransactionEvent', evseId))
      return params.idToken ? { idTokenInfo: { status: 'Invalid' } } : {};
    memory.placeTransaction(stationTransactionId, evseId);
    // An Ended event is a stop: a reading out of bounds there falls back to the last one known, not a refusal.
    const readings =
      eventType === 'Ended'
        ? stopValue(
            'Energy.Active.Import.Register',
            () => energyReadings(params.meterValue),
            () => [],
            warn,
          )
        : energyReadings(params.meterValue);
    memory.noteEnergy(evseId, readings.at(-1)?.energyWh);

    let idTokenInfo: IdTokenInfoType | undefined;
    // This event's readings went with the start that it made.
    let readingsKept = false;
    if (!transaction && params.idToken) {
      const started = await start(params, evseId, params.idToken, readings);
      readingsKept = true;
      idTokenInfo = idTokenInfoOf(started.decision);
      transaction = started.transaction;
    } else if (!transaction && eventType === 'Started') {
      site.transactions.noteStartWithoutDriver(stationId, stationTransactionId, {
        connectorId: evseId,
        startedAt: stationTime(params.timestamp),
        meterStartWh: readings.at(-1)?.energyWh ?? null,
      });
    } else if (params.idToken) {
      idTokenInfo = idTokenInfoOf(
        await authorizer.authorize({
          idTag: params.idToken.idToken,
          idTokenType: params.idToken.type,
          stationId,
          connectorId: evseId,
          ...(transaction && { transactionId: transaction.id }),
        }),
      );
    }

    const signed = signedReadings(evseId, params.meterValue);
    if (eventType !== 'Ended' && transaction)
      site.transactions.keepReadings(
        { stationId, connectorId: evseId, transactionId: transaction.id },
        { signed, plain: readingsKept ? [] : readings },
      );
    else if (eventType !== 'Ended' && signed.length > 0) {
      if (site.transactions.beganWithoutDriver(stationId, stationTransactionId))
        site.transactions.keepUnclaimedSignedReadings(stationId, stationTransactionId, signed);
      else
        warn(
          { stationTransactionId, eventType, readings: signed.length },
          'signed meter values for no transaction of this station: dropped',
        );
    }

    if (eventType === 'Ended') {
      memory.forgetTransaction(stationTransactionId);
      if (transaction) stop(params, transaction, readings, signed);
      else {
        site.transactions.forgetStartWithoutDriver(stationId, stationTransactionId);
        log.info(
          { stationTransactionId, evseId },
          'transaction ended before any event named its driver: nothing was billed, no event',
        );
      }
      if (memory.activityOf(evseId)?.connectorStatus === 'Occupied')
        ctx.reportStatus(evseId, { chargingState: undefined, ended: transaction !== undefined });
    } else {
      noteDrawnCurrent(ctx.deps, { stationId, connectorId: evseId }, currentSamples(params.meterValue));
      if (transactionInfo.chargingState && transaction)
        ctx.reportStatus(evseId, {
          connectorStatus: 'Occupied',
          chargingState: transactionInfo.chargingState,
          ended: false,
        });
    }
    // After the last await: in the commit of this event's writes (the group commits at the end of the turn).
    ctx.deps.forwarder?.queue(stationId, {
      action: 'TransactionEvent',
      payload: params,
      ...(transaction && { transactionId: transaction.id }),
    });
    log.debug(
      {
        stationTransactionId,
        eventType,
        seqNo: params.seqNo,
        offline: params.offline ?? false,
        triggerReason: params.triggerReason,
      },
      'transaction event',
    );
    return idTokenInfo ? { idTokenInfo } : {};
  };
}
