import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { RPCServer, createRPCError } from 'ocpp-rpc';
import { onTestFinished } from 'vitest';

/** A message the CSMS received from a station's uplink, in arrival order. */
export interface CsmsMessage {
  identity: string;
  /** The OCPP version of the link it came over. */
  protocol: string;
  action: string;
  params: Record<string, unknown>;
  /** What the CSMS answered (a StartTransaction: with the transaction id it gave); unset while unanswered. */
  answer?: Record<string, unknown>;
  /** When it arrived (Date.now()). */
  atMs: number;
}

/**
/**
 * What the CSMS answers a call: undefined for its default, 'callerror' (a FormationViolation: the message is wrong),
 * `{ callerror: code }` (a CALLERROR with that code), 'silent' (never answers), `{ answer }`, or a promise: its
 * default answer once that settles (a call held in flight for as long as a test needs).
 */
export type CsmsBehaviour = (
  message: CsmsMessage,
) =>
  'callerror' | 'silent' | Promise<unknown> | { answer: Record<string, unknown> } | { callerror: string } | undefined;

type ServerClient =
  InstanceType<typeof RPCServer> extends { on(e: 'client', l: (c: infer C) => void): unknown } ? C : never;

/**
 * An operator's central system that chargegate did not write: ocpp-rpc's own RPCServer in strict OCPP 1.6 and 2.0.1
 * mode (each link in the version it offers), assigning its own 1.6 transaction ids (from 5001). It records what it
 * receives and answers, can be cut off (connections closed, new ones refused) and restored, and sends commands to a
 * connected station. With `tls` it serves wss:// (Node's https server: its certificate, and with requestCert and
 * rejectUnauthorized the client certificates it admits).
 */
export class TestCsms {
  readonly received: CsmsMessage[] = [];
  behaviour: CsmsBehaviour = () => undefined;
  bootStatus: 'Accepted' | 'Pending' | 'Rejected' = 'Accepted';
  /** How long each answer takes (a slow CSMS stretches a replay over time). */
  answerDelayMs = 0;
  /** TLS handshakes that failed (a certificate one side refused), with Node's reason. */
  readonly tlsErrors: string[] = [];
  private nextTransactionId = 5001;
  private cut = false;
  private readonly clients = new Map<string, ServerClient>();
  private constructor(
    private readonly server: http.Server,
    private readonly rpc: RPCServer,
    private readonly tls: boolean,
  ) {}

  /**
   * `callConcurrency`: how many of its calls the CSMS sends a link before it has the answers (1, OCPP-J's rule, unless
   * a test needs a CSMS that breaks it).
   */
  static async start(
    options: { port?: number; tls?: https.ServerOptions; callConcurrency?: number } = {},
  ): Promise<TestCsms> {
    const rpc = new RPCServer({
      protocols: ['ocpp1.6', 'ocpp2.0.1'],
      strictMode: true,
      callConcurrency: options.callConcurrency ?? 1,
    });
    const server = options.tls ? https.createServer(options.tls) : http.createServer();
    server.on('upgrade', rpc.handleUpgrade);
    await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
    const csms = new TestCsms(server, rpc, options.tls !== undefined);
    server.on('tlsClientError', (err: Error) => csms.tlsErrors.push(err.message));
    rpc.auth((accept, reject, handshake) => {
      if (csms.cut) return reject(503, 'CSMS unavailable');
      const socket = handshake.request.socket as Partial<TLSSocket>;
      accept({
        password: handshake.password?.toString('utf8'),
        clientCertificate: socket.getPeerCertificate?.().subject?.CN,
      });
    });
    rpc.on('client', (client) => {
      csms.clients.set(client.identity, client);
      client.handle(({ method, params, signal }: { method: string; params: unknown; signal: AbortSignal }) => {
        const message: CsmsMessage = {
          identity: client.identity,
          protocol: client.protocol ?? '',
          action: method,
          params: params as Record<string, unknown>,
          atMs: Date.now(),
        };
        csms.received.push(message);
        const behaviour = csms.behaviour(message);
        if (behaviour === 'callerror') throw createRPCError('FormationViolation', 'the CSMS cannot take this message');
        if (behaviour === 'silent') return new Promise((resolve) => signal.addEventListener('abort', resolve));
        if (behaviour && 'callerror' in behaviour) throw createRPCError(behaviour.callerror, 'the CSMS failed');
        const given = behaviour instanceof Promise ? undefined : behaviour?.answer;
        const answer = given ?? csms.answer(method, message.protocol);
        message.answer = answer;
        if (behaviour instanceof Promise) return behaviour.then(() => answer);
        if (csms.answerDelayMs === 0) return answer;
        return new Promise((resolve) => setTimeout(resolve, csms.answerDelayMs, answer));
      });
    });
    return csms;
  }

  /** Holds every answer to `action` (the calls still arrive) until the returned release is called. */
  holdAnswers(action: string): () => void {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.behaviour = (m) => (m.action === action ? held : undefined);
    return release;
  }

  static async startForTest(options: Parameters<typeof TestCsms.start>[0] = {}): Promise<TestCsms> {
    const csms = await TestCsms.start(options);
    onTestFinished(() => csms.stop());
    return csms;
  }

  get url(): string {
    return `${this.tls ? 'wss' : 'ws'}://127.0.0.1:${(this.server.address() as AddressInfo).port}/csms`;
  }

  /** The password the station's uplink presented (basic auth), once connected. */
  passwordOf(identity: string): string | undefined {
    return this.sessionOf(identity)?.password;
  }

  /** The common name of the client certificate the station's uplink presented (TLS), once connected. */
  clientCertificateOf(identity: string): string | undefined {
    return this.sessionOf(identity)?.clientCertificate;
  }

  /** The uplink is gone: open connections closed, new ones refused, until restore(). */
  async cutOff(): Promise<void> {
    this.cut = true;
    await Promise.all([...this.clients.values()].map((c) => c.close({ code: 1001, force: true })));
    this.clients.clear();
  }

  /** The station's uplink socket closed by the CSMS, which goes on accepting new ones. */
  async drop(identity: string): Promise<void> {
    await this.clients.get(identity)?.close({ code: 1001, force: true });
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

  private sessionOf(identity: string): { password?: string; clientCertificate?: string } | undefined {
    return (this.clients.get(identity) as unknown as { session?: { password?: string; clientCertificate?: string } })
      ?.session;
  }

  private answer(method: string, protocol: string): Record<string, unknown> {
    const now = new Date().toISOString();
    switch (method) {
      case 'BootNotification':
        return { status: this.bootStatus, currentTime: now, interval: 1 };
      case 'Heartbeat':
        return { currentTime: now };
      case 'Authorize':
        return protocol === 'ocpp2.0.1'
          ? { idTokenInfo: { status: 'Accepted' } }
          : { idTagInfo: { status: 'Accepted' } };
      case 'StartTransaction':
        return { transactionId: this.nextTransactionId++, idTagInfo: { status: 'Accepted' } };
      case 'DataTransfer':
      case 'NotifyEVChargingNeeds':
      case 'NotifyEVChargingSchedule':
        return { status: 'Accepted' };
      default:
        return {};
    }
  }
}
