import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { loadOcppRpc } from './lazy-schemas.js';

/**
 * ocpp-rpc is CommonJS with declarations that require every option and return `unknown` from calls. This file
 * is the one place that gives it the narrow, typed shape the rest of chargegate uses.
 */

const ocppRpc = loadOcppRpc();

export const OCPP16 = 'ocpp1.6';
export const OCPP201 = 'ocpp2.0.1';
/**
 * What the central system speaks, preferred first: a station offering both gets 2.0.1 (docs/install/connecting-stations.md#ocpp-201-stations).
 */
export const CENTRAL_SYSTEM_PROTOCOLS = [OCPP201, OCPP16];

export interface RpcCallContext {
  method: string;
  params: unknown;
  messageId: string;
  signal: AbortSignal;
}

export type RpcHandler = (call: RpcCallContext) => unknown;

export interface RpcClientEvents {
  close: { code: number; reason: string };
  disconnect: { code: number; reason: string };
  badMessage: { buffer: Buffer; error: Error; response: unknown[] | null };
  strictValidationFailure: { error: Error; messageId: string; method: string; outbound: boolean; isCall: boolean };
  callError: { method: string; outbound: boolean; error: RpcErrorLike };
  message: { message: string; outbound: boolean };
}

export interface RpcErrorLike extends Error {
  rpcErrorCode: string;
  details?: unknown;
}

/** The part of an ocpp-rpc client (station side or central-system side) that chargegate uses. */
export interface RpcConnection {
  readonly identity: string;
  readonly protocol: string | undefined;
  readonly state: number;
  call(method: string, params?: unknown, options?: { callTimeoutMs?: number; signal?: AbortSignal }): Promise<unknown>;
  handle(method: string, handler: RpcHandler): void;
  handle(handler: RpcHandler): void;
  close(options?: {
    code?: number;
    reason?: string;
    awaitPending?: boolean;
    force?: boolean;
  }): Promise<{ code?: number; reason?: string } | undefined>;
  sendRaw(message: string): void;
  on<E extends keyof RpcClientEvents>(event: E, listener: (event: RpcClientEvents[E]) => void): unknown;
  once<E extends keyof RpcClientEvents>(event: E, listener: (event: RpcClientEvents[E]) => void): unknown;
}

/** An action map generated from ocpp-rpc's schemas: action -> [request, response]. */
export type ActionMap<Actions> = { [A in keyof Actions]: [unknown, unknown] };

/** A connection's calls typed by an action map: each resolves to its action's response type. */
export type TypedCall<Actions extends ActionMap<Actions>> = <A extends keyof Actions & string>(
  action: A,
  params: Actions[A][0],
  options?: { callTimeoutMs?: number; signal?: AbortSignal },
) => Promise<Actions[A][1]>;

/**
 * The calls chargegate makes on a connection, typed. Strict mode validated every answer against the schema the
 * action map was generated from, so this is the one place the `unknown` ocpp-rpc resolves to becomes that type.
 */
export function typedCall<Actions extends ActionMap<Actions>>(
  connection: Pick<RpcConnection, 'call'>,
): TypedCall<Actions> {
  return (action, params, options) => connection.call(action, params, options);
}

/** The connecting side: a station, or chargegate speaking to the upstream CPO as a station. */
export interface RpcClient extends RpcConnection {
  connect(): Promise<unknown>;
  /** Options for the next connect (the password it presents). */
  reconfigure(options: { password: string | null }): void;
}

export interface RpcHandshake {
  identity: string;
  endpoint: string;
  password: Buffer | undefined;
  remoteAddress: string | undefined;
  protocols: Set<string>;
  request: IncomingMessage;
}

export interface RpcServerClient<Session> extends RpcConnection {
  readonly session: Session;
  readonly handshake: RpcHandshake;
}

export interface RpcServer<Session> {
  auth(
    callback: (
      accept: (session: Session) => void,
      reject: (code: number, message: string) => void,
      handshake: RpcHandshake,
    ) => void | Promise<void>,
  ): void;
  on(event: 'client', listener: (client: RpcServerClient<Session>) => void): unknown;
  on(
    event: 'upgradeAborted',
    listener: (event: { error: Error; identity: string; request: IncomingMessage }) => void,
  ): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  readonly handleUpgrade: (request: IncomingMessage, socket: Duplex, head: Buffer) => Promise<void>;
  close(options?: { code?: number; reason?: string; awaitPending?: boolean; force?: boolean }): Promise<void>;
}

export interface RpcClientOptions {
  endpoint: string;
  identity: string;
  /** The subprotocols offered, preferred first (default OCPP 1.6 only). */
  protocols?: string[];
  password?: string;
  callTimeoutMs?: number;
  reconnect?: boolean;
  maxReconnects?: number;
  pingIntervalMs?: number;
  /** TLS options for wss:// (e.g. `ca` for a self-signed central system). */
  wsOpts?: Record<string, unknown>;
}

export interface RpcServerOptions {
  callTimeoutMs: number;
  pingIntervalMs?: number;
  /** The largest frame a socket may send; ws closes the socket with 1009 before buffering more. */
  maxMessageBytes: number;
  /** Malformed frames in a row that disconnect a station (1002). */
  maxBadMessages: number;
  /** Rewrites every frame before it is sent to a station speaking `protocol` (see createRpcServer). */
  outgoingFrame?: (frame: string, protocol: string | undefined) => string;
}

/** A strict-mode OCPP-J client (1.6 unless told): calls and answers that break the schemas never leave or arrive. */
export function createRpcClient(options: RpcClientOptions): RpcClient {
  const Client = ocppRpc.RPCClient as unknown as new (options: object) => RpcClient;
  return new Client({ protocols: [OCPP16], strictMode: true, ...options, password: options.password ?? null });
}

/**
 * A strict-mode OCPP-J server for 2.0.1 and 1.6; chargegate feeds it upgrades from its own HTTP(S) listener.
 * ocpp-rpc's validators compile a schema on its first use, so 2.0.1's cost nothing until a 2.0.1 station calls.
 */
export function createRpcServer<Session>(options: RpcServerOptions): RpcServer<Session> {
  const Server = ocppRpc.RPCServer as unknown as new (options: object) => RpcServer<Session>;
  const { maxMessageBytes, maxBadMessages, outgoingFrame, ...rest } = options;
  // ocpp-rpc closes once its count of bad frames in a row exceeds the limit: the limit-th bad frame closes.
  const server = new Server({
    protocols: CENTRAL_SYSTEM_PROTOCOLS,
    strictMode: true,
    ...rest,
    maxBadMessages: maxBadMessages - 1,
    wssOptions: { maxPayload: maxMessageBytes },
  });
  if (outgoingFrame) {
    // ocpp-rpc offers no hook for the frames it writes itself (the CALLERRORs of malformed frames and failed schema
    // checks), but every frame leaves through the client's public sendRaw(): wrapped here, before anyone else
    // sees the client (this listener is the first), and nowhere else. test/ocpp/bad-input.test.ts holds it to that.
    server.on('client', (client) => {
      const send = client.sendRaw.bind(client);
      client.sendRaw = (frame: string) => send(outgoingFrame(frame, client.protocol));
    });
  }
  return server;
}

/** A CALLERROR to send back from a handler, with an OCPP 1.6 error code. */
export function rpcError(code: string, message: string): RpcErrorLike {
  return ocppRpc.createRPCError(code, message) as unknown as RpcErrorLike;
}

export function isRpcError(err: unknown): err is RpcErrorLike {
  return err instanceof Error && typeof (err as Partial<RpcErrorLike>).rpcErrorCode === 'string';
}

export function isRpcTimeout(err: unknown): boolean {
  return err instanceof (ocppRpc as unknown as { TimeoutError: new () => Error }).TimeoutError;
}

export const RPC_OPEN = 1;
export const RPC_CLOSING = 2;
