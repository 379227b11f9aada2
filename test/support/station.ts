import {
  createRpcClient,
  type BootNotificationRequest,
  type BootNotificationResponse,
  type ChangeConfigurationRequest,
  type ClearChargingProfileRequest,
  type GetConfigurationRequest,
  type IdTagInfo,
  type RemoteStartTransactionRequest,
  type RemoteStopTransactionRequest,
  type RpcClient,
  type SendLocalListRequest,
  type SetChargingProfileRequest,
  type StartTransactionResponse,
  type StopTransactionResponse,
  type TriggerMessageRequest,
} from '../../src/ocpp/index.js';
import { rpcError } from '../../src/ocpp/rpc.js';
import { drawnA, profileFrom16, ProfileStack, type RunningTransaction } from './profile-stack.js';

/**
 * A simulated OCPP 1.6-J charging station on ocpp-rpc's RPCClient in strict mode: an independent client that
 * validates every frame both ways against the official schemas. It keeps an energy register per connector and
 * behaves like a real station to the central system's commands: an accepted RemoteStartTransaction is followed
 * by a real StartTransaction, an accepted RemoteStopTransaction by a StopTransaction with reason Remote, and
 * charging profiles are held and obeyed as OCPP has a station stack them (profile-stack.ts).
 * Tests, the demo, the benchmarks and scripts/station-simulator.ts all use it.
 */

export interface StationOptions {
  /** The OCPP basic-auth password (`chargegate station pair` prints it); omit under security profile 0. */
  password?: string;
  /** CA certificate(s) to trust for wss:// (a test's self-signed central system). */
  ca?: string | Buffer;
  /** The station's client certificate (chain) and key, PEM (security profile 3). */
  clientCertificate?: { cert: string | Buffer; key: string | Buffer };
  /** How RemoteStartTransaction is answered (default Accepted). */
  remoteStart?: 'Accepted' | 'Rejected';
  /** Milliseconds before one of the station's own calls counts as unanswered (default 10 s). */
  callTimeoutMs?: number;
  /** Energy register of every connector at connect time, Wh (default 0). */
  initialMeterWh?: number;
  /**
   * A station that will not be controlled: SetChargingProfile answered Rejected or NotSupported, or a CALLERROR
   * NotImplemented (no Smart Charging feature profile). Default: profiles are taken and obeyed.
   */
  refuseProfiles?: 'Rejected' | 'NotSupported' | 'NotImplemented';
  /** Its ChargingScheduleMaxPeriods (1.6 §9.4): a profile of more periods is Rejected. Default: no limit. */
  maxPeriods?: number;
  /** What the car on any connector would draw unlimited, A per phase (default 32). */
  carDemandA?: number;
}

export interface StartTransactionInput {
  connectorId: number;
  idTag: string;
  /** Wh; defaults to the connector's register. */
  meterStart?: number;
  reservationId?: number;
  timestamp?: Date;
}

export interface StopTransactionInput {
  transactionId: number;
  /** Wh; defaults to the connector's register. */
  meterStop?: number;
  reason?: string;
  idTag?: string;
  timestamp?: Date;
  /** Signed readings sent in transactionData: SampledValues with format SignedData (docs/partners/signed-meter-values.md#signed-meter-values). */
  signedValues?: Array<{ value: string; context?: string }>;
  /** Plain register readings sent in transactionData (Energy.Active.Import.Register in Wh, default Transaction.End). */
  energyValues?: Array<{ wh: number; context?: string }>;
}

/** A transaction the station started or stopped because the central system told it to. */
export interface RemoteTransaction {
  transactionId: number;
  connectorId: number;
  idTag: string;
}

interface OpenTransaction extends RemoteTransaction {
  meterStartWh: number;
  startedAt: Date;
}

/** A queue whose consumer may arrive before or after the producer. */
class Mailbox<T> {
  private readonly items: Array<Promise<T>> = [];
  private readonly waiters: Array<(item: Promise<T>) => void> = [];

  put(item: Promise<T>): void {
    item.catch(() => undefined);
    const waiter = this.waiters.shift();
    if (waiter) waiter(item);
    else this.items.push(item);
  }

  take(timeoutMs: number, what: string): Promise<T> {
    const ready = this.items.shift();
    if (ready) return ready;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(deliver), 1);
        reject(new Error(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const deliver = (item: Promise<T>) => {
        clearTimeout(timer);
        item.then(resolve, reject);
      };
      this.waiters.push(deliver);
    });
  }
}

export class SimulatedStation {
  /** Every command the central system sent, in order. */
  readonly received: Array<{ action: string; params: unknown }> = [];
  /** The station's configuration keys, as GetConfiguration reports and ChangeConfiguration changes them. */
  readonly configuration = new Map<string, string>([
    ['HeartbeatInterval', '300'],
    ['MeterValueSampleInterval', '60'],
    ['AuthorizeRemoteTxRequests', 'false'],
    ['NumberOfConnectors', '2'],
  ]);
  /** The station's local authorization list (SendLocalList) by idTag, and its version (GetLocalListVersion). */
  readonly localList = new Map<string, IdTagInfo>();
  localListVersion = 0;
  /** The charging profiles the station holds (1.6 rules: another id at a taken stack level replaces). */
  readonly profiles = new ProfileStack({ sameLevelOtherId: 'replace' });
  private readonly meterWh = new Map<number, number>();
  private readonly open = new Map<number, OpenTransaction>();
  /** Ended on the station's side (endLocally), their StopTransaction not sent yet. */
  private readonly endedLocally = new Map<number, OpenTransaction>();
  private readonly remoteStarts = new Mailbox<RemoteTransaction>();
  private readonly remoteStops = new Mailbox<RemoteTransaction>();

  private constructor(
    readonly identity: string,
    readonly rpc: RpcClient,
    private readonly options: StationOptions,
  ) {
    this.registerCommandHandlers();
  }

  /** Connects (the WebSocket upgrade); rejects when the central system refuses it (e.g. 401). */
  static async connect(
    url: string,
    identity: string,
    password?: string,
    options: Omit<StationOptions, 'password'> = {},
  ): Promise<SimulatedStation> {
    const rpc = createRpcClient({
      endpoint: url,
      identity,
      ...(password !== undefined && { password }),
      reconnect: false,
      callTimeoutMs: options.callTimeoutMs ?? 10_000,
      ...((options.ca !== undefined || options.clientCertificate) && {
        wsOpts: { ca: options.ca, minVersion: 'TLSv1.2', ...options.clientCertificate },
      }),
    });
    const station = new SimulatedStation(identity, rpc, { ...options, ...(password !== undefined && { password }) });
    await rpc.connect();
    return station;
  }

  /** Any OCPP 1.6 call, for what the typed helpers below do not cover. */
  call<Res = unknown>(action: string, params: object = {}): Promise<Res> {
    return this.rpc.call(action, params) as Promise<Res>;
  }

  boot(params: Partial<BootNotificationRequest> = {}): Promise<BootNotificationResponse> {
    return this.call('BootNotification', {
      chargePointVendor: 'chargegate-sim',
      chargePointModel: 'SimStation',
      firmwareVersion: '1.0.0',
      ...params,
    });
  }

  heartbeat(): Promise<{ currentTime: string }> {
    return this.call('Heartbeat');
  }

  async authorize(idTag: string): Promise<IdTagInfo> {
    return (await this.call<{ idTagInfo: IdTagInfo }>('Authorize', { idTag })).idTagInfo;
  }

  statusNotification(input: {
    connectorId: number;
    status: string;
    errorCode?: string;
    info?: string;
    timestamp?: Date;
  }): Promise<object> {
    return this.call('StatusNotification', {
      connectorId: input.connectorId,
      status: input.status,
      errorCode: input.errorCode ?? 'NoError',
      ...(input.info !== undefined && { info: input.info }),
      ...(input.timestamp !== undefined && { timestamp: input.timestamp.toISOString() }),
    });
  }

  /** Sends StartTransaction and returns the central system's transactionId. */
  async startTransaction(input: StartTransactionInput): Promise<number> {
    return (await this.startTransactionWithInfo(input)).transactionId;
  }

  /** StartTransaction with the whole answer (transactionId and the re-evaluated idTagInfo). */
  async startTransactionWithInfo(input: StartTransactionInput): Promise<StartTransactionResponse> {
    const meterStartWh = input.meterStart ?? this.register(input.connectorId);
    this.meterWh.set(input.connectorId, meterStartWh);
    const startedAt = input.timestamp ?? new Date();
    const response = await this.call<StartTransactionResponse>('StartTransaction', {
      connectorId: input.connectorId,
      idTag: input.idTag,
      meterStart: meterStartWh,
      timestamp: startedAt.toISOString(),
      ...(input.reservationId !== undefined && { reservationId: input.reservationId }),
    });
    this.open.set(response.transactionId, {
      transactionId: response.transactionId,
      connectorId: input.connectorId,
      idTag: input.idTag,
      meterStartWh,
      startedAt,
    });
    return response;
  }

  /**
   * Ends the transaction on the station's side only, as a station does before it sends StopTransaction: profiles on
   * it are refused from now on. stopTransaction() then sends the stop.
   */
  endLocally(transactionId: number): void {
    const open = this.open.get(transactionId);
    if (!open) return;
    this.meterWh.set(open.connectorId, this.register(open.connectorId));
    this.endedLocally.set(transactionId, open);
    this.open.delete(transactionId);
    this.profiles.endTransaction(open.connectorId);
  }

  async stopTransaction(input: StopTransactionInput): Promise<StopTransactionResponse> {
    const open = this.open.get(input.transactionId) ?? this.endedLocally.get(input.transactionId);
    this.endedLocally.delete(input.transactionId);
    const meterStop = input.meterStop ?? (open ? this.register(open.connectorId) : 0);
    if (open) this.meterWh.set(open.connectorId, meterStop);
    const response = await this.call<StopTransactionResponse>('StopTransaction', {
      transactionId: input.transactionId,
      meterStop,
      timestamp: (input.timestamp ?? new Date()).toISOString(),
      ...(input.reason !== undefined && { reason: input.reason }),
      ...(input.idTag !== undefined && { idTag: input.idTag }),
      ...((input.signedValues || input.energyValues) && {
        transactionData: [
          {
            timestamp: (input.timestamp ?? new Date()).toISOString(),
            sampledValue: [
              ...(input.energyValues ?? []).map(({ wh, context }) => ({
                value: String(wh),
                measurand: 'Energy.Active.Import.Register',
                unit: 'Wh',
                context: context ?? 'Transaction.End',
              })),
              ...(input.signedValues ?? []).map(({ value, context }) => ({
                value,
                format: 'SignedData',
                measurand: 'Energy.Active.Import.Register',
                context: context ?? 'Transaction.End',
              })),
            ],
          },
        ],
      }),
    });
    this.open.delete(input.transactionId);
    if (open) this.profiles.endTransaction(open.connectorId);
    return response;
  }

  /** Adds charged energy to a connector's register (what meterStop and meterValues then report). */
  addEnergy(connectorId: number, wh: number): void {
    this.meterWh.set(connectorId, this.register(connectorId) + wh);
  }

  /**
   * One Energy.Active.Import.Register sample of the connector's register (Sample.Periodic unless `context` says
   * otherwise), and Current.Import when given.
   */
  meterValues(input: {
    connectorId: number;
    transactionId?: number;
    wh?: number;
    currentA?: number;
    timestamp?: Date;
    context?: string;
  }): Promise<object> {
    const context = input.context ?? 'Sample.Periodic';
    return this.meterValue(input, [
      {
        value: String(input.wh ?? this.register(input.connectorId)),
        measurand: 'Energy.Active.Import.Register',
        unit: 'Wh',
        context,
      },
      ...(input.currentA === undefined
        ? []
        : [{ value: String(input.currentA), measurand: 'Current.Import', unit: 'A', context }]),
    ]);
  }

  /**
   * MeterValues with one signed reading (format SignedData), as a meter with OCMF makes the station send it: the
   * whitepaper's JSON or a bare record, whatever `value` is.
   */
  signedMeterValue(input: {
    connectorId: number;
    transactionId?: number;
    value: string;
    context?: string;
    timestamp?: Date;
  }): Promise<object> {
    return this.meterValue(input, [
      {
        value: input.value,
        format: 'SignedData',
        measurand: 'Energy.Active.Import.Register',
        context: input.context ?? 'Transaction.Begin',
      },
    ]);
  }

  /** MeterValues with one meter value of these samples. */
  private meterValue(
    at: { connectorId: number; transactionId?: number; timestamp?: Date },
    sampledValue: object[],
  ): Promise<object> {
    return this.call('MeterValues', {
      connectorId: at.connectorId,
      ...(at.transactionId !== undefined && { transactionId: at.transactionId }),
      meterValue: [{ timestamp: (at.timestamp ?? new Date()).toISOString(), sampledValue }],
    });
  }

  /** The limit the station's profiles put on a connector at `at`, A per phase; undefined: none. */
  limitA(connectorId: number, at = new Date()): number | undefined {
    return this.profiles.limitAt(connectorId, at, this.runningOn(connectorId));
  }

  /** What the connector's car draws at `at`: nothing without a transaction, else its demand within the limit. */
  drawnA(connectorId: number, at = new Date()): number {
    if (!this.runningOn(connectorId)) return 0;
    return drawnA(this.options.carDemandA ?? 32, this.limitA(connectorId, at));
  }

  /**
   * MeterValues with what the connector draws now (Current.Import), as a periodic sample or, asked by TriggerMessage,
   * a triggered one.
   */
  reportDrawn(connectorId: number, context: 'Sample.Periodic' | 'Trigger' = 'Sample.Periodic'): Promise<object> {
    const transactionId = this.runningOn(connectorId)?.id;
    return this.meterValues({
      connectorId,
      ...(typeof transactionId === 'number' && { transactionId }),
      currentA: this.drawnA(connectorId),
      context,
    });
  }

  /** Transactions open at this station, as it sees them. */
  openTransactions(): RemoteTransaction[] {
    return [...this.open.values()].map(({ transactionId, connectorId, idTag }) => ({
      transactionId,
      connectorId,
      idTag,
    }));
  }

  /** The next transaction started because of a RemoteStartTransaction (already started or yet to come). */
  nextRemoteStart(timeoutMs = 10_000): Promise<RemoteTransaction> {
    return this.remoteStarts.take(timeoutMs, 'remote start');
  }

  /** The next transaction stopped because of a RemoteStopTransaction. */
  nextRemoteStop(timeoutMs = 10_000): Promise<RemoteTransaction> {
    return this.remoteStops.take(timeoutMs, 'remote stop');
  }

  /**
   * Replaces how the station answers a command. A handler that never answers (to test timeouts) should settle
   * when `signal` aborts, which happens when the connection closes: close() waits for answers in progress.
   */
  handle(action: string, handler: (params: unknown, signal: AbortSignal) => unknown): void {
    this.rpc.handle(action, async ({ params, signal }) => {
      this.received.push({ action, params });
      return handler(params, signal);
    });
  }

  async close(): Promise<void> {
    await this.rpc.close({ code: 1000, force: false });
  }

  /**
   * Connects again after the central system went away (a restart): the same station, with the profiles, transactions
   * and registers it kept meanwhile, as a real one keeps them over a lost WebSocket. It does not boot again.
   */
  async reconnect(): Promise<void> {
    await this.rpc.connect();
  }

  private register(connectorId: number): number {
    return this.meterWh.get(connectorId) ?? this.options.initialMeterWh ?? 0;
  }

  /** After our answer has left: ocpp-rpc sends it once the handler's promise settles, before any timer fires. */
  private afterReply(fn: () => Promise<RemoteTransaction>, mailbox: Mailbox<RemoteTransaction>): void {
    setImmediate(() => mailbox.put(fn()));
  }

  private registerCommandHandlers(): void {
    this.handle('RemoteStartTransaction', (params) => {
      const { connectorId = this.freeConnector(), idTag } = params as RemoteStartTransactionRequest;
      if (this.options.remoteStart === 'Rejected' || connectorId === undefined || this.busy(connectorId))
        return { status: 'Rejected' };
      this.afterReply(
        async () => ({ transactionId: await this.startTransaction({ connectorId, idTag }), connectorId, idTag }),
        this.remoteStarts,
      );
      return { status: 'Accepted' };
    });
    this.handle('RemoteStopTransaction', (params) => {
      const open = this.open.get((params as RemoteStopTransactionRequest).transactionId);
      if (!open) return { status: 'Rejected' };
      this.afterReply(async () => {
        await this.stopTransaction({ transactionId: open.transactionId, reason: 'Remote' });
        return { transactionId: open.transactionId, connectorId: open.connectorId, idTag: open.idTag };
      }, this.remoteStops);
      return { status: 'Accepted' };
    });
    this.handle('GetConfiguration', (params) => {
      const keys = (params as GetConfigurationRequest).key;
      const known = (keys ?? [...this.configuration.keys()]).filter((k) => this.configuration.has(k));
      const unknownKey = (keys ?? []).filter((k) => !this.configuration.has(k));
      return {
        configurationKey: known.map((key) => ({ key, readonly: false, value: this.configuration.get(key) })),
        ...(unknownKey.length > 0 && { unknownKey }),
      };
    });
    this.handle('ChangeConfiguration', (params) => {
      const { key, value } = params as ChangeConfigurationRequest;
      if (!this.configuration.has(key)) return { status: 'NotSupported' };
      this.configuration.set(key, value);
      return { status: 'Accepted' };
    });
    this.handle('SetChargingProfile', async (params) => {
      // A station handles its messages in order: a StartTransaction answer that arrived just before this call (the
      // frames can come in one read) has given its transaction an id by now, as the continuation of that call runs in
      // microtasks that an immediate waits for.
      await new Promise((resolve) => setImmediate(resolve));
      const { refuseProfiles } = this.options;
      if (refuseProfiles === 'NotImplemented') throw rpcError('NotImplemented', 'no Smart Charging');
      if (refuseProfiles) return { status: refuseProfiles };
      const { connectorId, csChargingProfiles } = params as SetChargingProfileRequest;
      const { maxPeriods = Infinity } = this.options;
      if (csChargingProfiles.chargingSchedule.chargingSchedulePeriod.length > maxPeriods) return { status: 'Rejected' };
      const profile = profileFrom16(csChargingProfiles);
      return { status: this.profiles.set(connectorId, profile, this.runningOn(connectorId)) };
    });
    this.handle('ClearChargingProfile', (params) => {
      const { id, connectorId, chargingProfilePurpose, stackLevel } = params as ClearChargingProfileRequest;
      return { status: this.profiles.clear({ id, connectorId, purpose: chargingProfilePurpose, stackLevel }) };
    });
    this.handle('SendLocalList', (params) => {
      const { listVersion, updateType, localAuthorizationList = [] } = params as SendLocalListRequest;
      if (updateType === 'Full') this.localList.clear();
      for (const { idTag, idTagInfo } of localAuthorizationList)
        if (idTagInfo) this.localList.set(idTag, idTagInfo);
        else this.localList.delete(idTag);
      this.localListVersion = listVersion;
      return { status: 'Accepted' };
    });
    this.handle('GetLocalListVersion', () => ({ listVersion: this.localListVersion }));
    this.handle('Reset', () => ({ status: 'Accepted' }));
    this.handle('UnlockConnector', () => ({ status: 'Unlocked' }));
    this.handle('ChangeAvailability', () => ({ status: 'Accepted' }));
    // 1.6 §5.17: the answer first, then the requested message; MeterValues of a connector carry what its car draws
    // now (Current.Import, context Trigger), without one the station's own register (connector 0).
    this.handle('TriggerMessage', (params) => {
      const { requestedMessage, connectorId } = params as TriggerMessageRequest;
      const send: Record<string, () => Promise<unknown>> = {
        BootNotification: () => this.boot(),
        Heartbeat: () => this.heartbeat(),
        StatusNotification: () => this.statusNotification({ connectorId: connectorId ?? 0, status: 'Available' }),
        MeterValues: () =>
          connectorId === undefined || connectorId === 0
            ? this.meterValues({ connectorId: 0, context: 'Trigger' })
            : this.reportDrawn(connectorId, 'Trigger'),
      };
      const trigger = send[requestedMessage];
      if (!trigger) return { status: 'NotImplemented' };
      setImmediate(() => void trigger().catch(() => undefined));
      return { status: 'Accepted' };
    });
  }

  private runningOn(connectorId: number): RunningTransaction | undefined {
    const open = [...this.open.values()].find((t) => t.connectorId === connectorId);
    return open && { id: open.transactionId, startedAt: open.startedAt };
  }

  private busy(connectorId: number): boolean {
    return this.runningOn(connectorId) !== undefined;
  }

  private freeConnector(): number | undefined {
    const connectors = Number(this.configuration.get('NumberOfConnectors') ?? '1');
    for (let c = 1; c <= connectors; c += 1) if (!this.busy(c)) return c;
    return undefined;
  }
}

/** Connects a simulated station: `ws://127.0.0.1:<ocppPort>/ocpp` and an identity such as CP001. */
export function connectStation(
  url: string,
  identity: string,
  password?: string,
  options: Omit<StationOptions, 'password'> = {},
): Promise<SimulatedStation> {
  return SimulatedStation.connect(url, identity, password, options);
}
