import { summarisedWarn, type Logger, type WarningBudget } from '../log/index.js';
import { RelayQueueFullError, StationCallGivenUpError } from './errors.js';
import type { DroppedCall } from './ocpp-metrics.js';
import type { RpcConnection } from './rpc.js';

/**
 * Whose call toward a station it is, in the order the station's lane sends them: load management's limits keep the
 * site's grid connection within its fuse, so they go first; then the CSMS's calls relayed through the uplink; then
 * operations (remote start and stop from the API or the CSMS, an installer's commands, the CertificateSigned a station
 * asked for).
 */
export type CallClass = 'limit' | 'relay' | 'operation';

const SENDING_ORDER: readonly CallClass[] = ['limit', 'relay', 'operation'];

/** docs/operating/security.md#security: the bounds of a station's call lane. */
export interface LaneBounds {
  /** CSMS calls waiting for one station besides the one in flight; one more is refused at once. */
  relaysQueued: number;
  /**
   * How long a relayed call or an operation in flight may keep a waiting limit from the station (counted from when it
   * was sent) before chargegate stops waiting for its answer. Below the 2 s within which a limit must reach a station
   * (#41), with room for the load step and the station's own answer.
   */
  giveUpMs: number;
}

export const LANE_BOUNDS: LaneBounds = { relaysQueued: 16, giveUpMs: 1_000 };

/** A flood's refusals and give-ups are logged once a minute per station, the rest counted (docs/operating/security.md#security). */
const LANE_WARNINGS: WarningBudget = { perInterval: 1, intervalMs: 60_000 };

interface Waiting {
  callClass: CallClass;
  action: string;
  params: unknown;
  resolve(answer: unknown): void;
  reject(err: unknown): void;
}

interface InFlight {
  call: Waiting;
  sentAt: number;
  abort: AbortController;
  giveUp?: NodeJS.Timeout;
}

export interface CallLaneOptions {
  bounds: LaneBounds;
  warn(fields: object, message: string): void;
  /** Counts a call refused or given up. */
  dropped(reason: DroppedCall): void;
  /** Monotonic milliseconds. */
  now?: () => number;
}

/**
 * One station's calls: one in flight at a time (OCPP-J's rule), the next chosen by class and first come first served
 * within one. A limit waits only for the limits before it and the call in flight, and for a relayed call or an
 * operation at most `giveUpMs` after it was sent: then its caller gets StationCallGivenUpError and, through the
 * call's AbortSignal, ocpp-rpc forgets it. The station's late answer to it is then a frame for an unknown message
 * id: ocpp-rpc counts it as one bad frame (the next good one resets the count) and answers nothing.
 */
export class CallLane {
  private readonly waiting: Record<CallClass, Waiting[]> = { limit: [], relay: [], operation: [] };
  private inFlight: InFlight | undefined;
  private readonly now: () => number;

  constructor(
    private readonly connection: Pick<RpcConnection, 'identity' | 'call'>,
    private readonly options: CallLaneOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
  }

  /** The station's answer, or the connection's error; RelayQueueFullError when too many relayed calls wait already. */
  call(callClass: CallClass, action: string, params: unknown): Promise<unknown> {
    const { relaysQueued } = this.options.bounds;
    if (callClass === 'relay' && this.waiting.relay.length >= relaysQueued) {
      this.options.warn({ action, relaysQueued }, 'CSMS call refused: too many already wait for this station');
      this.options.dropped('queue_full');
      return Promise.reject(new RelayQueueFullError(this.connection.identity, action, relaysQueued));
    }
    return new Promise((resolve, reject) => {
      this.waiting[callClass].push({ callClass, action, params, resolve, reject });
      if (callClass === 'limit') this.hurryInFlight();
      this.sendNext();
    });
  }

  private sendNext(): void {
    if (this.inFlight) return;
    const call = SENDING_ORDER.map((c) => this.waiting[c])
      .find((queue) => queue.length > 0)
      ?.shift();
    if (!call) return;
    const flight: InFlight = { call, sentAt: this.now(), abort: new AbortController() };
    this.inFlight = flight;
    const sending = (async () => this.connection.call(call.action, call.params, { signal: flight.abort.signal }))();
    sending.then(
      (answer) => this.settle(flight, () => call.resolve(answer)),
      (err: unknown) => this.settle(flight, () => call.reject(err)),
    );
  }

  /** Ends the flight once: an answer after a give-up finds the lane moved on and changes nothing. */
  private settle(flight: InFlight, outcome: () => void): void {
    if (this.inFlight !== flight) return;
    clearTimeout(flight.giveUp);
    this.inFlight = undefined;
    outcome();
    this.sendNext();
  }

  /** A limit waits: the relayed call or operation in flight gets what is left of giveUpMs. */
  private hurryInFlight(): void {
    const flight = this.inFlight;
    if (!flight || flight.call.callClass === 'limit' || flight.giveUp) return;
    const { giveUpMs } = this.options.bounds;
    const { action, callClass } = flight.call;
    flight.giveUp = setTimeout(
      () => {
        this.options.warn(
          { action, callClass, giveUpMs },
          'call given up: the station did not answer while a load limit waited',
        );
        this.options.dropped('given_up');
        flight.abort.abort();
        this.settle(flight, () =>
          flight.call.reject(new StationCallGivenUpError(this.connection.identity, action, giveUpMs)),
        );
      },
      Math.max(0, flight.sentAt + giveUpMs - this.now()),
    );
  }
}

/**
 * The lane of each station connection: a station that reconnects gets a new one, and what waited on the old
 * connection fails as offline as it is sent (ocpp-rpc refuses calls on a closed socket).
 */
export class CallLanes {
  private readonly lanes = new WeakMap<RpcConnection, CallLane>();

  constructor(
    private readonly options: {
      log: Logger;
      /** Counts a call a station's lane refused or gave up (the metrics). */
      dropped?: (stationId: string, reason: DroppedCall) => void;
      bounds?: LaneBounds;
    },
  ) {}

  of(connection: RpcConnection): CallLane {
    let lane = this.lanes.get(connection);
    if (!lane) {
      const { log, dropped, bounds = LANE_BOUNDS } = this.options;
      const stationId = connection.identity;
      lane = new CallLane(connection, {
        bounds,
        warn: summarisedWarn(log.child({ stationId }), LANE_WARNINGS),
        dropped: (reason) => dropped?.(stationId, reason),
      });
      this.lanes.set(connection, lane);
    }
    return lane;
  }
}
