import { isDeepStrictEqual } from 'node:util';
import type { LinkClient, LinkClock } from '../../src/uplink/station-link.js';
import { rpcError, type RpcCallContext, type RpcClientEvents } from '../../src/ocpp/rpc.js';

/*
 * A station link's two edges under a test's control (test/uplink/station-link.test.ts): a CSMS's ocpp-rpc client
 * whose sockets and answers the test decides, and a clock whose time only moves when the test says.
 */

/** A call the link made to the CSMS; answer it with `resolve`, `reject` (a CALLERROR), or never. */
export interface SentCall {
  method: string;
  /** The socket it went over: 1 for the first one taken, then counting up. */
  socket: number;
  params: Record<string, unknown>;
  at: number;
  resolve(answer: unknown): void;
  reject(err: Error): void;
}

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 3;

/**
 * The CSMS as one link's ocpp-rpc client sees it: each connect is taken or refused as `acceptConnects` says, every call
 * is recorded and answered by `answer` (undefined: left for the test to answer by hand), and a test drops the socket.
 */
export class FakeLinkClient implements LinkClient {
  state = CONNECTING;
  acceptConnects = true;
  readonly connects: number[] = [];
  /** Sockets taken so far: the current one's number while open. */
  socket = 0;
  readonly sent: SentCall[] = [];
  /** The default answer to a call; undefined leaves it in flight. */
  answer: (method: string, params: Record<string, unknown>) => unknown = () => undefined;
  /** The most calls the link had in flight at once. */
  mostInFlight = 0;
  private readonly inFlight = new Set<SentCall>();
  private handler: ((call: RpcCallContext) => unknown) | undefined;
  private readonly disconnectListeners: Array<(event: RpcClientEvents['disconnect']) => void> = [];

  constructor(private readonly clock: LinkClock) {}

  /** The password each connect presented (null: none). */
  password: string | null = null;

  reconfigure(options: { password: string | null }): void {
    this.password = options.password;
  }

  connect(): Promise<unknown> {
    this.connects.push(this.clock.now());
    if (!this.acceptConnects) return Promise.reject(new Error('connect ECONNREFUSED'));
    this.state = OPEN;
    this.socket += 1;
    return Promise.resolve(undefined);
  }

  call(method: string, params?: unknown): Promise<unknown> {
    if (this.state !== OPEN) return Promise.reject(new Error('not connected'));
    return new Promise((resolve, reject) => {
      const call: SentCall = {
        method,
        socket: this.socket,
        params: params as Record<string, unknown>,
        at: this.clock.now(),
        resolve: (answer) => (this.inFlight.delete(call), resolve(answer)),
        reject: (err) => (this.inFlight.delete(call), reject(err)),
      };
      this.sent.push(call);
      this.inFlight.add(call);
      this.mostInFlight = Math.max(this.mostInFlight, this.inFlight.size);
      const answer = this.answer(method, call.params);
      if (answer instanceof Error) call.reject(answer);
      else if (answer !== undefined) call.resolve(answer);
    });
  }

  handle(handler: unknown): void {
    this.handler = handler as (call: RpcCallContext) => unknown;
  }

  on<E extends keyof RpcClientEvents>(event: E, listener: (event: RpcClientEvents[E]) => void): unknown {
    if (event === 'disconnect')
      this.disconnectListeners.push(listener as (event: RpcClientEvents['disconnect']) => void);
    return this;
  }

  close(): Promise<undefined> {
    this.state = CLOSED;
    return Promise.resolve(undefined);
  }

  /** The CSMS closes the socket: calls in flight fail, the link hears of it. */
  drop(): void {
    this.state = CLOSED;
    for (const call of [...this.inFlight]) call.reject(new Error('socket closed'));
    for (const listener of this.disconnectListeners) listener({ code: 1006, reason: '' });
  }

  /** A call from the CSMS to the link, as ocpp-rpc hands it over. */
  fromCsms(method: string, params: unknown): Promise<unknown> {
    const signal = new AbortController().signal;
    return Promise.resolve(this.handler!({ method, params, messageId: String(this.sent.length), signal }));
  }

  /** The methods sent, in order. */
  methods(): string[] {
    return this.sent.map((c) => c.method);
  }

  /** The calls of one method. */
  of(method: string): SentCall[] {
    return this.sent.filter((c) => c.method === method);
  }

  /** Whether a call with these params was sent. */
  sentWith(method: string, params: Record<string, unknown>): boolean {
    return this.of(method).some((c) => isDeepStrictEqual(c.params, params));
  }
}

/** A CALLERROR from the CSMS with this code, as ocpp-rpc rejects a call with it. */
export function callError(code: string): Error {
  return rpcError(code, `the CSMS answered ${code}`);
}

/** A clock for one test: time moves only in advance(), which runs the timers due, in order, letting promises settle. */
export class ManualClock implements LinkClock {
  /** `start`: a daemon's test starts it at the real time, which its /health compares the link's downSince with. */
  constructor(private time = Date.UTC(2026, 0, 1)) {}

  private nextId = 1;
  private readonly timers = new Map<number, { at: number; ms: number; fn: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, ms, fn });
    return id;
  }

  clearTimeout(timer: unknown): void {
    this.timers.delete(timer as number);
  }

  /** The waits of the timers not yet run, as they were set, the soonest due first. */
  waits(): number[] {
    return [...this.timers.values()].sort((x, y) => x.at - y.at).map((t) => t.ms);
  }

  /** Moves time on by ms, running each timer due on the way at its own time. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    await settle();
    for (;;) {
      const due = [...this.timers.entries()]
        .filter(([, t]) => t.at <= until)
        .sort(([a, x], [b, y]) => x.at - y.at || a - b)[0];
      if (!due) break;
      const [id, timer] = due;
      this.timers.delete(id);
      this.time = timer.at;
      timer.fn();
      await settle();
    }
    this.time = until;
  }
}

/** Lets the promise chains and the database's commit (end of the event loop's turn) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}
