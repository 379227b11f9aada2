import type { UpstreamDecision } from '../authorization/index.js';
import type { Logger } from '../log/index.js';
import { messageOf } from '../log/index.js';
import {
  createRpcClient,
  isRpcError,
  isRpcTimeout,
  RPC_OPEN,
  rpcError,
  StationCallError,
  StationOfflineError,
  StationTimeoutError,
  type RpcCallContext,
  type RpcClient,
  type RpcClientOptions,
} from '../ocpp/index.js';
import type { LinkDialect, ReportedStatus } from './dialect.js';
import {
  INITIAL_LINK_STATE,
  nextLinkState,
  reconnectWaitMs,
  type LinkEvent,
  type LinkState,
  type LinkStateName,
} from './link-state.js';
import type { QueuedMessage, UplinkQueue } from './queue.js';

/** How the link reaches the CSMS; read at every connect, so a new password applies at the next one. */
export interface LinkSettings {
  url: string;
  securityProfile: number;
  /** undefined under profiles 1-2: no password set yet (`chargegate station upstream-password`). */
  password(): string | undefined;
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /** The largest frame the CSMS may send, as a station may send chargegate (docs/operating/security.md#security). */
  maxMessageBytes: number;
  callTimeoutMs: number;
  transactionMessageAttempts: number;
  transactionMessageRetryIntervalS: number;
  /** Reconnect back-off: the first wait, doubled per failure up to the last. */
  reconnectMs: { initial: number; max: number };
}

/** The local station behind the link, as the uplink sees it. */
export interface LocalStation {
  /** The BootNotification it last sent, as it sent it; undefined before its first. */
  bootInfo(): object | undefined;
  statuses(): ReportedStatus[];
  /** A call from the CSMS, relayed to the station; resolves with its answer. */
  relay(action: string, params: unknown): Promise<unknown>;
  /**
   * A call chargegate answers itself rather than relays: the CSMS's charging profiles for a station on a circuit
   * (docs/design/uplink.md#uplink-what-the-csms-sees); undefined for the others.
   */
  chargingProfileCall(action: string, params: Record<string, unknown>): Promise<unknown> | undefined;
  /** Told each time the queue has been sent to the end. */
  drained(): void;
}

/** The timers a link runs on: the real ones, or a test's own clock. */
export interface LinkClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

/** The part of an ocpp-rpc client a link uses. */
export type LinkClient = Pick<RpcClient, 'state' | 'connect' | 'reconfigure' | 'call' | 'handle' | 'on' | 'close'>;

/** What a link is made with besides its settings: a test gives its own client and clock. */
export interface LinkDeps {
  createClient(options: RpcClientOptions): LinkClient;
  clock: LinkClock;
}

export const REAL_LINK_DEPS: LinkDeps = {
  createClient: createRpcClient,
  clock: {
    now: () => Date.now(),
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
  },
};

/** A Pending or Rejected BootNotification with interval 0 is asked again after this long. */
const DEFAULT_BOOT_RETRY_S = 60;
/**
 * The CALLERROR codes that say the message itself is wrong (1.6 and 2.0.1 spellings): only these use up one of
 * transactionMessageAttempts. The others (GenericError, InternalError, SecurityError, ...) are the CSMS's trouble.
 */
const MESSAGE_REFUSED = new Set([
  'FormationViolation',
  'FormatViolation',
  'ProtocolError',
  'PropertyConstraintViolation',
  'OccurenceConstraintViolation',
  'OccurrenceConstraintViolation',
  'TypeConstraintViolation',
  'NotSupported',
  'NotImplemented',
]);

function refusesTheMessage(rpcErrorCode: string): boolean {
  return MESSAGE_REFUSED.has(rpcErrorCode);
}

/**
 * The wait before the next try after the CSMS's own trouble number n (from 0): timeoutMs doubling up to the retry
 * interval (never below timeoutMs), so a CSMS that took the socket before it answers calls gets the message seconds
 * later, and one that stays silent for a day is still tried every interval.
 */
function troubleBackOff(timeoutMs: number, intervalMs: number): (n: number) => number {
  const ceiling = Math.max(timeoutMs, intervalMs);
  return (n) => Math.min(ceiling, timeoutMs * 2 ** Math.min(n, 30));
}

/**
 * One station's connection to the CSMS under the station's identity and in its OCPP version (the dialect):
 * BootNotification first on every connect, then the queue in order, then the connectors' current statuses; live
 * messages only once that is done. Calls from the CSMS go to the station, one at a time, as the dialect maps them.
 */
export class StationLink {
  /** When the link last left `accepted` (or was made): the uplink's health counts from it. */
  downSince: Date;
  private current: LinkState = INITIAL_LINK_STATE;
  /** The state's one timer (a reconnect, a boot asked again): cleared whenever the state changes. */
  private timer: unknown;
  private readonly client: LinkClient;
  private readonly clock: LinkClock;
  /** Rows up to here have been answered: a reconnect goes on after them. */
  private cursor = 0;
  /** The queue is being sent: a second Accepted while it is goes on with the same loop. */
  private draining = false;
  private csmsCallInProgress = false;
  /** Calls answered GenericError during the one in progress: logged once it ends, not one line each. */
  private csmsCallsRefused = 0;
  /** A wait between attempts, cut short when the link closes. */
  private readonly aborts = new AbortController();

  constructor(
    readonly stationId: string,
    private readonly settings: LinkSettings,
    private readonly queue: UplinkQueue,
    private readonly station: LocalStation,
    private readonly log: Logger,
    private readonly dialect: LinkDialect,
    deps: LinkDeps = REAL_LINK_DEPS,
  ) {
    const { tls } = settings;
    this.clock = deps.clock;
    this.downSince = new Date(this.clock.now());
    this.client = deps.createClient({
      endpoint: settings.url,
      identity: stationId,
      protocols: [dialect.protocol],
      callTimeoutMs: settings.callTimeoutMs,
      // The link reconnects itself, so a refused first connect and a dropped socket take one path.
      reconnect: false,
      wsOpts: {
        // ws's own default is 100 MiB: a larger frame closes the socket (1009) before it is buffered.
        maxPayload: settings.maxMessageBytes,
        ...(tls?.ca && { ca: tls.ca }),
        ...(tls?.cert && { cert: tls.cert }),
        ...(tls?.key && { key: tls.key }),
      },
    });
    this.client.handle((call) => this.fromCsms(call));
    // A socket that was open dropped (a refused connect is handled where connect() fails).
    this.client.on('disconnect', ({ code, reason }) => {
      if (this.current.name === 'closed') return;
      this.log.warn({ code, reason }, 'uplink disconnected: reconnecting');
      this.to({ type: 'dropped', at: this.clock.now() });
      this.reconnectLater();
    });
  }

  /** Where the link stands with the CSMS (docs/design/uplink.md#uplink-what-the-csms-sees). */
  get state(): LinkStateName {
    return this.current.name;
  }

  open(): void {
    void this.connect();
  }

  /** Rows were committed to the queue: send them if the link is up. */
  wake(): void {
    if (this.current.name === 'accepted') void this.drain();
  }

  get backlog(): boolean {
    return this.queue.next(this.stationId, this.cursor) !== undefined;
  }

  /**
   * A message sent only while online, and once the queue and the statuses went first. The station's BootNotification
   * that the link waits for (it had none to introduce the station with when it connected) is the link's boot.
   */
  live(action: string, payload: object): void {
    const { current } = this;
    if (action === 'BootNotification' && current.name === 'booting' && current.awaitingStation) {
      this.to({ type: 'station-booted' });
      void this.boot(payload);
      return;
    }
    if (current.name !== 'accepted' || !current.caughtUp) return;
    void this.call(action, payload).then(
      (answer) => {
        if (action === 'BootNotification') this.booted(answer as { status: string; interval: number });
      },
      (err: unknown) => this.log.debug({ action, error: messageOf(err) }, 'CSMS did not take a live message'),
    );
  }

  /** The OCPP version the link speaks, the station's. */
  get protocol(): string {
    return this.dialect.protocol;
  }

  /** Authorize in the decision chain: only while the CSMS accepted the station; bounded by the caller. */
  async authorize(idTag: string, idTokenType?: string): Promise<UpstreamDecision> {
    if (this.current.name !== 'accepted') throw new Error(`uplink of ${this.stationId} is ${this.current.name}`);
    return this.dialect.decision(await this.call('Authorize', this.dialect.authorize(idTag, idTokenType)));
  }

  async close(): Promise<void> {
    this.to({ type: 'close' });
    this.aborts.abort();
    await this.client.close({ force: true }).catch(() => undefined);
  }

  /** Moves the state (link-state.ts), the one place it changes; the old state's timer goes with it. */
  private to(event: LinkEvent): void {
    const next = nextLinkState(this.current, event);
    if (next === this.current) return;
    this.clock.clearTimeout(this.timer);
    if (this.current.name === 'accepted' && next.name !== 'accepted') this.downSince = new Date(this.clock.now());
    this.current = next;
  }

  private after(ms: number, fn: () => void): void {
    this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(fn, ms);
  }

  private async connect(): Promise<void> {
    if (this.current.name !== 'connecting') return;
    const needsPassword = this.settings.securityProfile === 1 || this.settings.securityProfile === 2;
    let password: string | undefined;
    try {
      password = needsPassword ? this.settings.password() : undefined;
    } catch (err) {
      // A damaged keystore entry: the link waits for it to be set again, the daemon runs on.
      this.log.error({ error: messageOf(err) }, 'upstream password cannot be read: tried again');
      return this.connectFailed();
    }
    if (needsPassword && password === undefined) {
      this.log.warn('no upstream password for this station: set it with `chargegate station upstream-password`');
      return this.connectFailed();
    }
    // ocpp-rpc sends the password it holds at each connect.
    this.client.reconfigure({ password: password ?? null });
    try {
      await this.client.connect();
    } catch (err) {
      this.log.warn({ url: this.settings.url, error: messageOf(err) }, 'CSMS unreachable');
      return this.connectFailed();
    }
    this.log.info({ url: this.settings.url }, 'uplink connected');
    this.to({ type: 'opened', at: this.clock.now(), stationBooted: this.station.bootInfo() !== undefined });
    await this.boot();
  }

  private connectFailed(): void {
    this.to({ type: 'connect-failed' });
    this.reconnectLater();
  }

  /** In `connecting` after a failure or a drop: the next connect after the back-off its failures call for. */
  private reconnectLater(): void {
    if (this.current.name !== 'connecting') return;
    this.after(reconnectWaitMs(this.current.failures, this.settings.reconnectMs), () => void this.connect());
  }

  /** BootNotification, first on every connect: the station's own, as it last sent it. */
  private async boot(bootInfo = this.station.bootInfo()): Promise<void> {
    // Nothing to introduce the station with yet: its own BootNotification (live) will do it.
    if (!bootInfo || this.client.state !== RPC_OPEN) return;
    try {
      this.booted((await this.call('BootNotification', bootInfo)) as { status: string; interval: number });
    } catch (err) {
      // The socket dropped meanwhile: the reconnect boots again.
      if (this.client.state !== RPC_OPEN || this.current.name === 'closed') return;
      this.log.warn({ error: messageOf(err) }, 'CSMS did not answer BootNotification; asked again');
      this.retryBoot(DEFAULT_BOOT_RETRY_S);
    }
  }

  private booted(answer: { status: string; interval: number }): void {
    const was = this.current.name;
    // A late answer on a socket since dropped: the next connect boots again.
    if (was === 'connecting' || was === 'closed') return;
    this.to({ type: 'boot-answered', status: answer.status });
    if (this.current.name === 'accepted') {
      if (was !== 'accepted') this.log.info('CSMS accepted the station: sending its queue');
      void this.drain();
      return;
    }
    this.log.warn({ status: answer.status, interval: answer.interval }, 'CSMS did not accept the station: queue held');
    this.retryBoot(answer.interval > 0 ? answer.interval : DEFAULT_BOOT_RETRY_S);
  }

  private retryBoot(afterS: number): void {
    if (this.current.name === 'connecting' || this.current.name === 'closed') return;
    this.after(afterS * 1000, () => void this.boot());
  }

  /** Sends the queue in order while accepted, then the connectors' statuses (once per connect). */
  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      for (;;) {
        if (this.current.name !== 'accepted') return;
        const message = this.queue.next(this.stationId, this.cursor);
        if (!message) break;
        if (!(await this.queue.whileSending(this.stationId, message.id, () => this.deliver(message)))) return;
        this.cursor = message.id;
      }
      if (!this.current.caughtUp) {
        for (const status of this.dialect.statusNotifications(this.station.statuses(), new Date(this.clock.now())))
          await this.call('StatusNotification', status).catch(() => undefined);
        this.to({ type: 'caught-up' });
      }
    } finally {
      this.draining = false;
    }
    this.station.drained();
  }

  /**
   * One queued message until the CSMS answers it or it is dropped (true), or the link goes down (false: sent again
   * after the next connect). A CALLERROR saying the message is wrong is tried transactionMessageAttempts times,
   * transactionMessageRetryIntervalS apart and growing; the CSMS's own trouble (another CALLERROR, no answer) is tried
   * again as long as it takes, from timeoutMs doubling up to that interval (docs/design/uplink.md#uplink-what-the-csms-sees).
   */
  private async deliver(message: QueuedMessage): Promise<boolean> {
    if (message.protocol !== this.dialect.protocol) {
      // Queued before the station came back speaking another version: the CSMS would refuse it on this link.
      this.log.warn(
        { action: message.action, queuedIn: message.protocol, protocol: this.dialect.protocol },
        'message queued in the OCPP version the station spoke before: dropped',
      );
      this.queue.drop(this.stationId, message);
      return true;
    }
    const payload = this.dialect.outgoing(message);
    if (!payload) {
      this.queue.drop(this.stationId, message);
      return true;
    }
    const { transactionMessageAttempts: attempts, transactionMessageRetryIntervalS: intervalS } = this.settings;
    const troubleWaitMs = troubleBackOff(this.settings.callTimeoutMs, intervalS * 1000);
    for (let attempt = message.refusals + 1, refusalWaits = 1, troubles = 0; ;) {
      try {
        const answer = await this.call(message.action, payload);
        this.dialect.answered(message, answer);
        this.queue.acknowledge(this.stationId, message);
        return true;
      } catch (err) {
        if (this.current.name !== 'accepted' || this.client.state !== RPC_OPEN) return false;
        let waitMs: number;
        if (isRpcError(err) && refusesTheMessage(err.rpcErrorCode)) {
          if (attempt >= attempts) {
            this.log.warn(
              { action: message.action, transactionId: message.transactionId, attempts, error: err.rpcErrorCode },
              'CSMS refused a queued message every time: dropped',
            );
            this.dialect.refused(message);
            this.queue.drop(this.stationId, message);
            return true;
          }
          this.queue.refused(message.id);
          attempt += 1;
          waitMs = intervalS * 1000 * refusalWaits;
          refusalWaits += 1;
        } else if (isRpcError(err) || isRpcTimeout(err)) {
          waitMs = troubleWaitMs(troubles);
          troubles += 1;
        } else throw err;
        this.log.info(
          { action: message.action, error: messageOf(err), waitMs },
          'queued message not taken: tried again',
        );
        if (!(await this.wait(waitMs))) return false;
      }
    }
  }

  /**
   * A call from the CSMS: relayed to the station, its answer returned, transaction ids mapped to chargegate's. One at
   * a time, as OCPP-J has it: a call that comes while another is in progress is answered GenericError at once, so a
   * flood holds neither memory nor the station's calls (docs/operating/security.md#security).
   */
  private fromCsms(call: RpcCallContext): Promise<unknown> {
    if (this.csmsCallInProgress) {
      this.csmsCallsRefused += 1;
      return Promise.reject(rpcError('GenericError', 'a call from the CSMS is already in progress'));
    }
    this.csmsCallInProgress = true;
    return this.answerCsms(call).finally(() => {
      this.csmsCallInProgress = false;
      if (this.csmsCallsRefused === 0) return;
      this.log.warn(
        { action: call.method, refused: this.csmsCallsRefused },
        'CSMS sent calls while one was in progress: answered GenericError',
      );
      this.csmsCallsRefused = 0;
    });
  }

  private async answerCsms({ method, params }: RpcCallContext): Promise<unknown> {
    // The CSMS's answer to a StartTransaction and its next call can arrive in one read: the answer's handling (a few
    // promise turns) maps the new transaction id before this call looks it up.
    await new Promise((resolve) => setImmediate(resolve));
    const local = this.dialect.incoming(method, params as Record<string, unknown>);
    if (!local) {
      this.log.warn({ action: method }, 'CSMS named a transaction this station does not have: answered Rejected');
      return { status: 'Rejected' };
    }
    try {
      return await (this.station.chargingProfileCall(method, local) ?? this.station.relay(method, local));
    } catch (err) {
      if (err instanceof StationCallError) throw rpcError(err.ocppErrorCode, err.message);
      if (err instanceof StationOfflineError || err instanceof StationTimeoutError)
        throw rpcError('GenericError', err.message);
      this.log.error({ action: method, err }, 'relaying a CSMS call to the station failed');
      throw rpcError('InternalError', `${method} could not be relayed`);
    }
  }

  private call(action: string, payload: unknown): Promise<unknown> {
    return this.client.call(action, payload);
  }

  /** Resolves true after ms, false at once if the link closes meanwhile. */
  private wait(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.aborts.signal.aborted) return resolve(false);
      const onAbort = () => (this.clock.clearTimeout(timer), resolve(false));
      const timer = this.clock.setTimeout(
        () => (this.aborts.signal.removeEventListener('abort', onAbort), resolve(true)),
        ms,
      );
      this.aborts.signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
