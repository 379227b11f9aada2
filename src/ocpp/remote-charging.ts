import { ChargegateError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { Site, Transaction } from '../site/index.js';
import type {
  StartChargingAnswer,
  StartChargingRequest,
  StationCommands,
  StopChargingAnswer,
} from './station-commands.js';

/** Who asked for a remote start or stop, logged with it: a partner application, or the operator's CSMS. */
export type RemoteCaller = { by: 'api'; clientId: string } | { by: 'csms' };

/** A remote start on a connector the config does not give the station (the command is not sent). */
export class UnknownConnectorError extends ChargegateError {
  override name = 'UnknownConnectorError';
  readonly code = 'CHARGEGATE_UNKNOWN_CONNECTOR';
}

/** A remote stop of a transaction that is over (the command is not sent; the API answers 409). */
export class TransactionStoppedError extends ChargegateError {
  override name = 'TransactionStoppedError';
  readonly code = 'CHARGEGATE_TRANSACTION_STOPPED';
  constructor(transaction: Pick<Transaction, 'id' | 'stoppedAt'>) {
    super(`transaction ${transaction.id} already stopped at ${transaction.stoppedAt}`);
  }
}

/**
 * Starting and stopping a charge from afar, whoever asks (docs/partners/index.md#for-partners, "Uplink to a CSMS"): the same checks,
 * the same command in the station's OCPP version, the same log line. The station's own answer is the result; the
 * sessions it then starts or stops reach the partners as any other.
 */
export interface RemoteCharging {
  /**
   * Without a connectorId (a CSMS may leave it out) the station picks one. A 2.0.1 station's answer may name a
   * transaction it had already started.
   */
  start(stationId: string, request: StartChargingRequest, caller: RemoteCaller): Promise<StartChargingAnswer>;
  stop(transaction: Transaction, caller: RemoteCaller): Promise<StopChargingAnswer>;
}

export function createRemoteCharging(options: {
  site: Pick<Site, 'connectors'>;
  commands: Pick<StationCommands, 'startCharging' | 'stopCharging'>;
  logger: Logger;
}): RemoteCharging {
  const { site, commands, logger: log } = options;
  return {
    async start(stationId, request, caller) {
      const { connectorId } = request;
      const fix = connectorId === undefined ? undefined : site.connectors.unconfigured(stationId, connectorId);
      if (fix) throw new UnknownConnectorError(`station ${stationId} has no connector ${connectorId}: ${fix}`);
      const answer = await commands.startCharging(stationId, request);
      log.info({ ...caller, stationId, connectorId, status: answer.status }, 'remote start');
      return answer;
    },
    async stop(transaction, caller) {
      if (transaction.stoppedAt !== null) throw new TransactionStoppedError(transaction);
      const answer = await commands.stopCharging(transaction.stationId, transaction);
      const { stationId, id: transactionId } = transaction;
      log.info({ ...caller, stationId, transactionId, status: answer.status }, 'remote stop');
      return answer;
    },
  };
}
