import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RPCServer, createRPCError } from 'ocpp-rpc';
import { onTestFinished } from 'vitest';

/** A message the CSMS received from a station's uplink, in arrival order. */
export interface CsmsMessage {
  identity: string;
  action: string;
  params: Record<string, unknown>;
}

/**
 * What the CSMS answers a call: undefined for its default, 'callerror', 'silent' (never answers), or a promise: its
 * default answer once that settles (a call held in flight for as long as a test needs).
 */
export type CsmsBehaviour = (message: CsmsMessage) => 'callerror' | 'silent' | Promise<unknown> | undefined;

type ServerClient =
  InstanceType<typeof RPCServer> extends { on(e: 'client', l: (c: infer C) => void): unknown } ? C : never;

/**
 * An operator's central system that chargegate did not write: ocpp-rpc's own RPCServer in strict OCPP 1.6 mode,
 * assigning its own transaction ids (from 5001). It records what it receives, can be cut off (connections closed,
 * new ones refused) and restored, and sends commands to a connected station.
 */
export class TestCsms {
  readonly received: CsmsMessage[] = [];
  behaviour: CsmsBehaviour = () => undefined;
  bootStatus: 'Accepted' | 'Pending' | 'Rejected' = 'Accepted';
  /** How long each answer takes (a slow CSMS stretches a replay over time). */
  answerDelayMs = 0;
  private nextTransactionId = 5001;
  private cut = false;
  private readonly clients = new Map<string, ServerClient>();
  private constructor(
    private readonly server: http.Server,
    private readonly rpc: RPCServer,
  ) {}

  static async start(port = 0): Promise<TestCsms> {
    const rpc = new RPCServer({ protocols: ['ocpp1.6'], strictMode: true });
    const server = http.createServer();
    server.on('upgrade', rpc.handleUpgrade);
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const csms = new TestCsms(server, rpc);
    rpc.auth((accept, reject, handshake) => {
      if (csms.cut) return reject(503, 'CSMS unavailable');
      accept({ password: handshake.password?.toString('utf8') });
    });
    rpc.on('client', (client) => {
      csms.clients.set(client.identity, client);
      client.handle(({ method, params, signal }: { method: string; params: unknown; signal: AbortSignal }) => {
        const message = { identity: client.identity, action: method, params: params as Record<string, unknown> };
        csms.received.push(message);
        const behaviour = csms.behaviour(message);
        if (behaviour === 'callerror') throw createRPCError('InternalError', 'the CSMS failed to process it');
        if (behaviour === 'silent') return new Promise((resolve) => signal.addEventListener('abort', resolve));
        const answer = csms.answer(method);
        if (behaviour instanceof Promise) return behaviour.then(() => answer);
        if (csms.answerDelayMs === 0) return answer;
        return new Promise((resolve) => setTimeout(resolve, csms.answerDelayMs, answer));
      });
    });
    return csms;
  }

  static async startForTest(): Promise<TestCsms> {
    const csms = await TestCsms.start();
    onTestFinished(() => csms.stop());
    return csms;
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/csms`;
  }

  /** The password the station's uplink presented (basic auth), once connected. */
  passwordOf(identity: string): string | undefined {
    return (this.clients.get(identity) as unknown as { session?: { password?: string } })?.session?.password;
  }

  /** The uplink is gone: open connections closed, new ones refused, until restore(). */
  async cutOff(): Promise<void> {
    this.cut = true;
    await Promise.all([...this.clients.values()].map((c) => c.close({ code: 1001, force: true })));
    this.clients.clear();
  }

  restore(): void {
    this.cut = false;
  }

  isConnected(identity: string): boolean {
    return this.clients.get(identity)?.state === 1;
  }

  /** A command to the station, through its uplink. */
  call(identity: string, action: string, params: unknown): Promise<unknown> {
    const client = this.clients.get(identity);
    if (!client) throw new Error(`${identity} is not connected to the CSMS`);
    return client.call(action, params);
  }

  of(action: string, identity = 'CP001'): Array<Record<string, unknown>> {
    return this.received.filter((m) => m.action === action && m.identity === identity).map((m) => m.params);
  }

  async stop(): Promise<void> {
    await this.rpc.close({ force: true });
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private answer(method: string): unknown {
    const now = new Date().toISOString();
    switch (method) {
      case 'BootNotification':
        return { status: this.bootStatus, currentTime: now, interval: 1 };
      case 'Heartbeat':
        return { currentTime: now };
      case 'Authorize':
        return { idTagInfo: { status: 'Accepted' } };
      case 'StartTransaction':
        return { transactionId: this.nextTransactionId++, idTagInfo: { status: 'Accepted' } };
      case 'DataTransfer':
        return { status: 'Accepted' };
      default:
        return {};
    }
  }
}
