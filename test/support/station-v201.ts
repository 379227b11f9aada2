import ocppRpc from 'ocpp-rpc';
import type { Ocpp201Actions } from '../../src/ocpp/index.js';
import { drawnA, profileFrom201, ProfileStack, type RunningTransaction } from './profile-stack.js';

type Request<A extends keyof Ocpp201Actions> = Ocpp201Actions[A][0];
type Response<A extends keyof Ocpp201Actions> = Ocpp201Actions[A][1];
type SampledValue = NonNullable<Request<'TransactionEvent'>['meterValue']>[number]['sampledValue'][number];

/** ocpp-rpc's client, typed only as far as these tests use it (its own declarations type calls as unknown). */
interface Client {
  readonly protocol: string | undefined;
  connect(): Promise<unknown>;
  call(method: string, params: unknown): Promise<unknown>;
  handle(method: string, handler: (call: { params: unknown; signal: AbortSignal }) => unknown): void;
  close(options?: { code?: number; force?: boolean }): Promise<unknown>;
}

/**
 * A simulated OCPP 2.0.1 charging station: ocpp-rpc's RPCClient in strict mode, used directly (not through
 * chargegate's rpc.ts), so every frame both ways is checked against the official 2.0.1 schemas by code we did not
 * write. It answers RequestStart/RequestStopTransaction as a station does: accepted, then the TransactionEvents (the
 * start's naming its remoteStartId), and holds and obeys charging profiles as OCPP has a station stack them
 * (profile-stack.ts).
 */
export class StationV201 {
  private seqNo = 0;
  private transactionCount = 0;
  readonly transactions: string[] = [];
  /** The RequestStart/RequestStopTransaction calls the station got, in order, as it got them. */
  readonly remoteRequests: Array<
    | { action: 'RequestStartTransaction'; params: Request<'RequestStartTransaction'> }
    | { action: 'RequestStopTransaction'; params: Request<'RequestStopTransaction'> }
  > = [];
  /** What CertificateSigned calls brought (after a SignCertificate). */
  readonly certificatesSigned: Array<Request<'CertificateSigned'>> = [];
  /** How the station answers CertificateSigned (a station whose key store refuses the chain: Rejected). */
  certificateSignedAnswer: 'Accepted' | 'Rejected' = 'Accepted';
  /** The station's local authorization list (SendLocalList) by token, and its version (GetLocalListVersion). */
  readonly localList = new Map<string, NonNullable<Request<'SendLocalList'>['localAuthorizationList']>[number]>();
  localListVersion = 0;
  /** The energy register, Wh, reported with every TransactionEvent. */
  meterWh = 0;
  /** The charging profiles the station holds (2.0.1 rules: another id at a taken stack level is refused). */
  readonly profiles = new ProfileStack({ sameLevelOtherId: 'reject' });
  /**
   * A station that will not be controlled: SetChargingProfile answered Rejected, or a CALLERROR NotSupported or
   * NotImplemented (no Smart Charging). Default: profiles are taken and obeyed.
   */
  refuseProfiles?: 'Rejected' | 'NotSupported' | 'NotImplemented';
  /** What the car on any EVSE would draw unlimited, A per phase. */
  carDemandA = 32;
  /** Transactions running, by the station's id: on which EVSE, since when (from their Started events). */
  private readonly running = new Map<string, { evseId: number; startedAt: Date }>();

  private constructor(
    private readonly client: Client,
    readonly identity: string,
  ) {}

  static async connect(
    url: string,
    identity: string,
    options: {
      protocols?: string[];
      password?: string;
      tls?: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer };
    } = {},
  ): Promise<StationV201> {
    const Client = ocppRpc.RPCClient as unknown as new (options: object) => Client;
    const client = new Client({
      endpoint: url,
      identity,
      protocols: options.protocols ?? ['ocpp2.0.1'],
      strictMode: true,
      reconnect: false,
      ...(options.password !== undefined && { password: options.password }),
      ...(options.tls && { wsOpts: { minVersion: 'TLSv1.2', ...options.tls } }),
    });
    await client.connect();
    const station = new StationV201(client, identity);
    client.handle('CertificateSigned', ({ params }) => {
      station.certificatesSigned.push(params as Request<'CertificateSigned'>);
      return { status: station.certificateSignedAnswer };
    });
    client.handle('RequestStartTransaction', ({ params }) =>
      station.remoteStart(params as Request<'RequestStartTransaction'>),
    );
    client.handle('RequestStopTransaction', ({ params }) =>
      station.remoteStop(params as Request<'RequestStopTransaction'>),
    );
    client.handle('SetChargingProfile', ({ params }) =>
      station.setChargingProfile(params as Request<'SetChargingProfile'>),
    );
    client.handle('SendLocalList', ({ params }) => {
      const { versionNumber, updateType, localAuthorizationList = [] } = params as Request<'SendLocalList'>;
      if (updateType === 'Full') station.localList.clear();
      for (const entry of localAuthorizationList)
        if (entry.idTokenInfo) station.localList.set(entry.idToken.idToken, entry);
        else station.localList.delete(entry.idToken.idToken);
      station.localListVersion = versionNumber;
      return { status: 'Accepted' };
    });
    client.handle('GetLocalListVersion', () => ({ versionNumber: station.localListVersion }));
    client.handle('TriggerMessage', ({ params }) => station.triggerMessage(params as Request<'TriggerMessage'>));
    client.handle('ClearChargingProfile', ({ params }) => {
      const { chargingProfileId, chargingProfileCriteria: criteria } = params as Request<'ClearChargingProfile'>;
      const purpose = criteria?.chargingProfilePurpose;
      return {
        status: station.profiles.clear({
          id: chargingProfileId,
          connectorId: criteria?.evseId,
          purpose:
            purpose === 'TxProfile' || purpose === 'TxDefaultProfile' ? purpose : purpose && 'ChargePointMaxProfile',
          stackLevel: criteria?.stackLevel,
        }),
      };
    });
    return station;
  }

  get protocol(): string | undefined {
    return this.client.protocol;
  }

  call<A extends keyof Ocpp201Actions & string>(action: A, params: Request<A>): Promise<Response<A>> {
    return this.client.call(action, params) as Promise<Response<A>>;
  }

  /**
   * Answers the central system's `action` with handler (replacing the station's own way, if it has one); a promise
   * holds the answer until it settles.
   */
  handle<A extends keyof Ocpp201Actions & string>(
    action: A,
    handler: (params: Request<A>) => Response<A> | Promise<Response<A>>,
  ): void {
    this.client.handle(action, ({ params }) => handler(params as Request<A>));
  }

  boot(): Promise<Response<'BootNotification'>> {
    return this.call('BootNotification', {
      chargingStation: { vendorName: 'ACME', model: 'Wallbox 2.0.1', firmwareVersion: '2.1.0' },
      reason: 'PowerUp',
    });
  }

  status(
    evseId: number,
    connectorStatus: Request<'StatusNotification'>['connectorStatus'],
  ): Promise<Response<'StatusNotification'>> {
    return this.call('StatusNotification', {
      timestamp: new Date().toISOString(),
      connectorStatus,
      evseId,
      connectorId: 1,
    });
  }

  /**
   * A TransactionEvent with the energy register as Energy.Active.Import.Register (Wh), and Current.Import when given,
   * numbered in order.
   */
  transactionEvent(
    eventType: Request<'TransactionEvent'>['eventType'],
    transactionId: string,
    options: {
      evseId?: number;
      idToken?: string;
      chargingState?: Request<'TransactionEvent'>['transactionInfo']['chargingState'];
      stoppedReason?: Request<'TransactionEvent'>['transactionInfo']['stoppedReason'];
      triggerReason?: Request<'TransactionEvent'>['triggerReason'];
      /** The id of the RequestStartTransaction that started it, which the CSMS matches with its request. */
      remoteStartId?: number;
      timestamp?: Date;
      offline?: boolean;
      currentA?: number;
      /** A signed reading of the register (docs/partners/signed-meter-values.md#signed-meter-values), its fields sent as given. */
      signedMeterValue?: { signedMeterData: string; signingMethod: string; encodingMethod: string; publicKey: string };
    } = {},
  ): Promise<Response<'TransactionEvent'>> {
    const at = options.timestamp ?? new Date();
    if (eventType === 'Started' && options.evseId !== undefined)
      this.running.set(transactionId, { evseId: options.evseId, startedAt: at });
    const ended = eventType === 'Ended' && this.running.get(transactionId);
    if (ended) {
      this.running.delete(transactionId);
      this.profiles.endTransaction(ended.evseId);
    }
    const timestamp = at.toISOString();
    const context =
      eventType === 'Started' ? 'Transaction.Begin' : eventType === 'Ended' ? 'Transaction.End' : 'Sample.Periodic';
    const current: SampledValue[] =
      options.currentA === undefined
        ? []
        : [{ value: options.currentA, context, measurand: 'Current.Import', unitOfMeasure: { unit: 'A' } }];
    return this.call('TransactionEvent', {
      eventType,
      timestamp,
      triggerReason: options.triggerReason ?? (eventType === 'Ended' ? 'EVCommunicationLost' : 'Authorized'),
      seqNo: this.seqNo++,
      ...(options.offline !== undefined && { offline: options.offline }),
      transactionInfo: {
        transactionId,
        ...(options.chargingState !== undefined && { chargingState: options.chargingState }),
        ...(options.stoppedReason !== undefined && { stoppedReason: options.stoppedReason }),
        ...(options.remoteStartId !== undefined && { remoteStartId: options.remoteStartId }),
      },
      ...(options.evseId !== undefined && { evse: { id: options.evseId, connectorId: 1 } }),
      ...(options.idToken !== undefined && { idToken: { idToken: options.idToken, type: 'ISO14443' } }),
      meterValue: [
        {
          timestamp,
          sampledValue: [
            {
              value: this.meterWh,
              context,
              measurand: 'Energy.Active.Import.Register',
              unitOfMeasure: { unit: 'Wh' },
              ...(options.signedMeterValue && { signedMeterValue: options.signedMeterValue }),
            },
            ...current,
          ],
        },
      ],
    });
  }

  /** The limit the station's profiles put on an EVSE at `at`, A per phase; undefined: none. */
  limitA(evseId: number, at = new Date()): number | undefined {
    return this.profiles.limitAt(evseId, at, this.runningOn(evseId));
  }

  /** What the EVSE's car draws at `at`: nothing without a transaction, else its demand within the limit. */
  drawnA(evseId: number, at = new Date()): number {
    if (!this.runningOn(evseId)) return 0;
    return drawnA(this.carDemandA, this.limitA(evseId, at));
  }

  /**
   * A TransactionEvent Updated with what the EVSE draws now (Current.Import). Async, so that one asked for as the
   * transaction ends is a rejection its caller catches, not a throw out of a timer.
   */
  async reportDrawn(evseId: number): Promise<Response<'TransactionEvent'>> {
    const transaction = this.runningOn(evseId);
    if (!transaction) throw new Error(`no transaction on EVSE ${evseId}`);
    return this.transactionEvent('Updated', String(transaction.id), {
      triggerReason: 'MeterValuePeriodic',
      currentA: this.drawnA(evseId),
    });
  }

  newTransactionId(): string {
    this.transactionCount += 1;
    return `${this.identity}-tx-${this.transactionCount}`;
  }

  close(): Promise<unknown> {
    return this.client.close({ force: true });
  }

  /**
   * Connects again after the central system went away (a restart): the same station, with its profiles and running
   * transactions, as a real one keeps them over a lost WebSocket. It does not boot again.
   */
  async reconnect(): Promise<void> {
    await this.client.connect();
  }

  private runningOn(evseId: number): RunningTransaction | undefined {
    for (const [id, { evseId: on, startedAt }] of this.running) if (on === evseId) return { id, startedAt };
    return undefined;
  }

  private setChargingProfile(params: Request<'SetChargingProfile'>): Response<'SetChargingProfile'> {
    if (this.refuseProfiles === 'NotSupported' || this.refuseProfiles === 'NotImplemented')
      throw ocppRpc.createRPCError(this.refuseProfiles, 'no Smart Charging');
    if (this.refuseProfiles) return { status: this.refuseProfiles };
    const profile = profileFrom201(params.chargingProfile);
    return { status: this.profiles.set(params.evseId, profile, this.runningOn(params.evseId)) };
  }

  /**
   * 2.0.1 F06: Accepted, then the requested message. MeterValues of an EVSE carry what its car draws now
   * (Current.Import, context Trigger), without one the main meter's register (EVSE 0); other messages are not
   * implemented here.
   */
  private triggerMessage(params: Request<'TriggerMessage'>): Response<'TriggerMessage'> {
    if (params.requestedMessage !== 'MeterValues') return { status: 'NotImplemented' };
    const evseId = params.evse?.id ?? 0;
    const context = 'Trigger';
    const current: SampledValue[] = this.runningOn(evseId)
      ? [{ value: this.drawnA(evseId), context, measurand: 'Current.Import', unitOfMeasure: { unit: 'A' } }]
      : [];
    const timestamp = new Date().toISOString();
    const energy: SampledValue = {
      value: this.meterWh,
      context,
      measurand: 'Energy.Active.Import.Register',
      unitOfMeasure: { unit: 'Wh' },
    };
    setImmediate(() => {
      void this.call('MeterValues', { evseId, meterValue: [{ timestamp, sampledValue: [energy, ...current] }] }).catch(
        () => undefined,
      );
    });
    return { status: 'Accepted' };
  }

  private remoteStart(params: Request<'RequestStartTransaction'>): Response<'RequestStartTransaction'> {
    this.remoteRequests.push({ action: 'RequestStartTransaction', params });
    const transactionId = this.newTransactionId();
    this.transactions.push(transactionId);
    setImmediate(() => {
      void this.transactionEvent('Started', transactionId, {
        evseId: params.evseId ?? 1,
        idToken: params.idToken.idToken,
        chargingState: 'Charging',
        triggerReason: 'RemoteStart',
        remoteStartId: params.remoteStartId,
      }).catch(() => undefined);
    });
    return { status: 'Accepted' };
  }

  /** A transaction it started on request or on its own (a Started event naming its EVSE) and that runs. */
  private remoteStop(params: Request<'RequestStopTransaction'>): Response<'RequestStopTransaction'> {
    this.remoteRequests.push({ action: 'RequestStopTransaction', params });
    if (!this.transactions.includes(params.transactionId) && !this.running.has(params.transactionId))
      return { status: 'Rejected' };
    setImmediate(() => {
      void this.transactionEvent('Ended', params.transactionId, {
        stoppedReason: 'Remote',
        triggerReason: 'RemoteStop',
      }).catch(() => undefined);
    });
    return { status: 'Accepted' };
  }
}
