import { setTimeout as delay } from 'node:timers/promises';
import type modbusSerial from 'modbus-serial';
import { messageOf, type Logger } from '../log/index.js';
import type { BusSettings } from './bus-settings.js';
import { BusError, type BusErrorKind } from './errors.js';
import type { RegisterRead } from './read-plan.js';

type ModbusRTU = InstanceType<typeof modbusSerial.default>;

/**
 * modbus-serial (and serialport under it) loads when the first bus opens: a gateway without meters does not pay
 * its memory and start-up time. It is CommonJS: its class is module.exports, which it also exposes as `.default`.
 */
async function createClient(): Promise<ModbusRTU> {
  const { default: modbusSerial } = await import('modbus-serial');
  return new modbusSerial.default();
}

/** Told about every request and connection, for metrics. */
export interface BusObserver {
  request(busKey: string, seconds: number, outcome: 'ok' | BusErrorKind): void;
  connected(busKey: string): void;
}

export interface BusStats {
  key: string;
  connected: boolean;
  requests: number;
  errors: number;
  timeouts: number;
  /** Connections opened after the first one. */
  reconnects: number;
  lastLatencyMs?: number;
  averageLatencyMs?: number;
  lastError?: string;
}

/** A serial port should close cleanly; a socket is simply dropped (a peer that never acknowledges must not hang us). */
const CLOSE_WAIT_MS = 1000;

/**
 * One physical bus or socket shared by the meters on it. Requests go through our own FIFO queue with one in
 * flight: serial meters answer only one master request at a time, and many TCP gateways mix up overlapping
 * requests. Between requests the bus stays quiet for interRequestDelayMs (unitChangeDelayMs when the next request
 * addresses another unit). After a timeout or transport error the client is closed and recreated: at once after a
 * single failure, then with exponential backoff from reconnectMinMs to reconnectMaxMs while failures repeat. Behind
 * a serial device server (rtuovertcp) a timeout is one silent unit on the serial side, not a broken socket: the
 * connection stays (a device server often takes one connection at a time, and a new one may lose its first bytes).
 */
/** What a meter's poller needs of its bus: register reads and the line's statistics. */
export type RegisterSource = Pick<ModbusBus, 'read' | 'stats'>;

export class ModbusBus {
  private client: ModbusRTU | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private lastUnitId: number | undefined;
  private lastEndAt = 0;
  private failures = 0;
  private reconnectAt = 0;
  private connects = 0;
  private latencyTotalMs = 0;
  private closed = false;
  private readonly abort = new AbortController();
  private readonly counters = { requests: 0, errors: 0, timeouts: 0 };
  private lastLatencyMs: number | undefined;
  private lastError: string | undefined;

  private readonly logger: Logger;

  constructor(
    readonly settings: BusSettings,
    logger: Logger,
    private readonly observer?: BusObserver,
  ) {
    this.logger = logger.child({ bus: settings.key });
  }

  /** Reads registers from one unit; waits its turn behind the requests already queued on this bus. */
  read(unitId: number, request: RegisterRead, timeoutMs: number): Promise<number[]> {
    const run = this.tail.then(() => this.execute(unitId, request, timeoutMs));
    this.tail = run.catch(() => undefined);
    return run;
  }

  stats(): BusStats {
    const answered = this.counters.requests - this.counters.timeouts;
    return {
      key: this.settings.key,
      connected: this.client?.isOpen === true,
      ...this.counters,
      reconnects: Math.max(0, this.connects - 1),
      ...(this.lastLatencyMs !== undefined && { lastLatencyMs: round(this.lastLatencyMs) }),
      ...(answered > 0 && { averageLatencyMs: round(this.latencyTotalMs / answered) }),
      ...(this.lastError !== undefined && { lastError: this.lastError }),
    };
  }

  /** Fails what is still queued, lets the request in flight finish (bounded by its timeout), then closes the client. */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    await this.tail;
    const client = this.client;
    this.client = undefined;
    if (client) await this.closeClient(client);
  }

  private async execute(unitId: number, request: RegisterRead, timeoutMs: number): Promise<number[]> {
    const gap =
      this.lastUnitId !== undefined && this.lastUnitId !== unitId
        ? Math.max(this.settings.interRequestDelayMs, this.settings.unitChangeDelayMs)
        : this.settings.interRequestDelayMs;
    await this.waitUntil(this.lastEndAt + gap);
    const client = await this.connectedClient(timeoutMs);
    client.setID(unitId);
    client.setTimeout(timeoutMs);
    const what = `${this.settings.key} unit ${unitId} function ${request.functionCode} registers ${request.address}+${request.count}`;
    const started = performance.now();
    this.counters.requests += 1;
    try {
      const result =
        request.functionCode === 3
          ? await client.readHoldingRegisters(request.address, request.count)
          : await client.readInputRegisters(request.address, request.count);
      if (result.data.length !== request.count)
        throw new BusError('transport', `${what}: got ${result.data.length} registers`);
      this.answered(started, 'ok');
      this.failures = 0;
      return result.data;
    } catch (err) {
      const error = classify(err, what, timeoutMs);
      this.counters.errors += 1;
      this.lastError = error.message;
      if (error.kind === 'timeout') this.counters.timeouts += 1;
      else this.answered(started, error.kind);
      if (error.kind === 'exception') this.failures = 0;
      else if (!(error.kind === 'timeout' && this.settings.connection.type === 'rtuovertcp'))
        await this.dropClient(error);
      throw error;
    } finally {
      this.lastUnitId = unitId;
      this.lastEndAt = Date.now();
    }
  }

  private answered(started: number, outcome: 'ok' | BusErrorKind): void {
    const ms = performance.now() - started;
    this.lastLatencyMs = ms;
    this.latencyTotalMs += ms;
    this.observer?.request(this.settings.key, ms / 1000, outcome);
  }

  private async connectedClient(timeoutMs: number): Promise<ModbusRTU> {
    if (this.client?.isOpen) return this.client;
    if (this.client) await this.dropClient(new BusError('transport', `${this.settings.key} closed by the other side`));
    await this.waitUntil(this.reconnectAt);
    const client = await createClient();
    // Port errors surface here; the request in flight then fails by its timeout and the client is recreated.
    client.on('error', (err) => this.logger.debug({ err }, 'modbus port error'));
    const opening = this.open(client);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        opening,
        new Promise(
          (_, reject) =>
            (timer = setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs)),
        ),
      ]);
    } catch (err) {
      void opening.then(
        () => this.closeClient(client),
        () => undefined,
      );
      client.destroy(() => undefined);
      const error = new BusError('transport', `cannot open ${this.target()}: ${openFailure(err)}`);
      this.counters.errors += 1;
      this.lastError = error.message;
      this.failures += 1;
      this.reconnectAt = Date.now() + this.backoffMs();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    this.connects += 1;
    if (this.connects > 1) this.logger.info({ reconnects: this.connects - 1 }, 'modbus bus reconnected');
    this.observer?.connected(this.settings.key);
    this.client = client;
    return client;
  }

  private open(client: ModbusRTU): Promise<void> {
    const c = this.settings.connection;
    switch (c.type) {
      case 'tcp':
        return client.connectTCP(c.host, { port: c.port });
      case 'rtuovertcp':
        // Raw RTU frames (address, PDU, CRC) over TCP, as a transparent serial device server forwards them.
        // modbus-serial's TelnetPort sends exactly that; its "TcpRTUBuffered" port adds an MBAP header instead.
        return client.connectTelnet(c.host, { port: c.port });
      case 'rtu':
        return client.connectRTUBuffered(c.device, {
          baudRate: c.baudRate,
          parity: c.parity,
          dataBits: c.dataBits,
          stopBits: c.stopBits,
        });
    }
  }

  /** What the installer wired: the serial device, or the host and port. */
  private target(): string {
    const c = this.settings.connection;
    return c.type === 'rtu' ? c.device : `${c.host}:${c.port}`;
  }

  private async dropClient(cause: BusError): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.failures += 1;
    this.reconnectAt = Date.now() + this.backoffMs();
    this.logger.debug(
      { cause: cause.message, reconnectInMs: this.reconnectAt - Date.now() },
      'closing modbus client to recreate it',
    );
    if (client) await this.closeClient(client);
  }

  /** No wait after one failure (a lost frame is common on a serial bus); doubling waits while failures repeat. */
  private backoffMs(): number {
    if (this.failures <= 1) return 0;
    return Math.min(this.settings.reconnectMaxMs, this.settings.reconnectMinMs * 2 ** (this.failures - 2));
  }

  private closeClient(client: ModbusRTU): Promise<void> {
    if (this.settings.connection.type !== 'rtu' || !client.isOpen) {
      client.destroy(() => undefined);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, CLOSE_WAIT_MS);
      client.close(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async waitUntil(at: number): Promise<void> {
    const ms = at - Date.now();
    if (ms > 0 && !this.closed) await delay(ms, undefined, { signal: this.abort.signal }).catch(() => undefined);
    if (this.closed) throw new BusError('closed', `${this.settings.key} is closed`);
  }
}

function classify(err: unknown, what: string, timeoutMs: number): BusError {
  if (err instanceof BusError) return err;
  const e = err as { modbusCode?: number; errno?: string; message?: string };
  if (typeof e.modbusCode === 'number') return new BusError('exception', `${what}: ${e.message}`);
  if (e.errno === 'ETIMEDOUT') return new BusError('timeout', `${what}: no answer within ${timeoutMs} ms`);
  return new BusError('transport', `${what}: ${messageOf(err)}`);
}

/**
 * serialport says "Error: No such file or directory, cannot open /dev/x": the reason alone, the path is ours to say.
 */
function openFailure(err: unknown): string {
  return messageOf(err)
    .replace(/^(Error: )+/, '')
    .replace(/, cannot open \S+$/, '');
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
