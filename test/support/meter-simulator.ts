import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './free-port.js';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import modbusSerial, { type IServiceVector } from 'modbus-serial';
import { REGISTER_WORDS, type MeterRegisterMap, type RegisterSpec } from '../../src/modbus/index.js';

const { ServerTCP, ServerSerial } = modbusSerial;

/** Values a simulated meter shows; each is encoded into registers with the unit's register map. */
export interface MeterValues {
  energyKWh?: number;
  currentA?: number[];
  powerW?: number;
}

/** One request the simulator answered (or swallowed while the unit was offline). */
export interface SimulatedRequest {
  unitId: number;
  functionCode: 3 | 4;
  address: number;
  count: number;
  /** Date.now() when the request arrived and when the answer left (undefined: never answered). */
  receivedAt: number;
  answeredAt?: number;
}

/** What a scripted test drives, whichever simulator (ours on modbus-serial, or Debian's pymodbus) is behind it. */
export interface ScriptableMeter {
  set(unitId: number, values: MeterValues): Promise<void>;
  /** Raw registers, e.g. a NaN or garbage in the energy register. */
  setRegisters(unitId: number, functionCode: 3 | 4, address: number, words: number[]): Promise<void>;
  /** An offline unit swallows requests: the master times out, as with an unplugged RS-485 meter. */
  setOnline(unitId: number, online: boolean): Promise<void>;
  close(): Promise<void>;
}

export interface MeterSimulatorOptions {
  /** The register map each unit id answers with (a model from src/modbus, or a custom one). */
  units: Record<number, MeterRegisterMap>;
  /** Delay before each answer, to make overlapping requests visible. */
  responseDelayMs?: number;
}

/**
 * Energy meters that speak real Modbus frames, built on modbus-serial's servers: Modbus TCP on a loopback port or
 * Modbus RTU on a serial device (a socat pseudo-terminal in tests). Used by the tests, the demo and the bench.
 */
export class MeterSimulator implements ScriptableMeter {
  readonly requests: SimulatedRequest[] = [];
  /** The most requests that were ever being answered at once (the master should keep this at 1). */
  maxInFlight = 0;
  port = 0;
  private readonly registers = new Map<string, number>();
  private readonly offline = new Set<number>();
  private readonly sources = new Map<number, () => MeterValues>();
  private inFlight = 0;
  private closeServer: () => Promise<void> = async () => undefined;
  private closed: Promise<void> | undefined;

  private constructor(private readonly options: MeterSimulatorOptions) {}

  static async tcp(options: MeterSimulatorOptions & { host?: string; port?: number }): Promise<MeterSimulator> {
    const sim = new MeterSimulator(options);
    const host = options.host ?? '127.0.0.1';
    // ServerTCP treats port 0 as "the default 502": ask the OS for a free port first.
    const port = options.port || (await freePort(host));
    const server = new ServerTCP(sim.vector(), { host, port, unitID: 255 });
    await new Promise<void>((resolve, reject) => {
      server.on('initialized', () => resolve());
      server.on('serverError', reject);
    });
    sim.port = port;
    server.on('socketError', () => undefined);
    sim.closeServer = () => new Promise((resolve) => server.close(() => resolve()));
    return sim;
  }

  /**
   * `frameGapMs`: the silence after which the simulator takes the bytes it received as one request (modbus-serial's
   * default 30 ms; Modbus RTU's t3.5 is 4 ms at 9600 baud). Each request waits it out before it is answered.
   */
  static async rtu(
    options: MeterSimulatorOptions & { device: string; baudRate?: number; frameGapMs?: number },
  ): Promise<MeterSimulator> {
    const sim = new MeterSimulator(options);
    const server = new ServerSerial(sim.vector(), {
      path: options.device,
      baudRate: options.baudRate ?? 9600,
      unitID: 255,
      ...(options.frameGapMs !== undefined && { interval: options.frameGapMs }),
    } as ConstructorParameters<typeof ServerSerial>[1]);
    await new Promise<void>((resolve, reject) => {
      server.on('initialized', () => resolve());
      server.on('error', reject);
    });
    sim.closeServer = () => new Promise((resolve) => server.close(() => resolve()));
    return sim;
  }

  async set(unitId: number, values: MeterValues): Promise<void> {
    this.show(unitId, values);
  }

  /**
   * A unit that measures something live: each request is answered with what `source` says at that moment (a
   * circuit meter seeing what the simulated stations draw right now).
   */
  follow(unitId: number, source: () => MeterValues): void {
    this.mapOf(unitId);
    this.sources.set(unitId, source);
  }

  private show(unitId: number, values: MeterValues): void {
    const map = this.mapOf(unitId);
    const put = (spec: RegisterSpec, value: number) =>
      this.write(unitId, spec.functionCode, spec.address, encodeRegister(spec, value));
    if (values.energyKWh !== undefined) put(map.energyImportKWh, values.energyKWh);
    values.currentA?.forEach((a, i) => {
      const spec = map.currentA[i];
      if (spec) put(spec, a);
    });
    if (values.powerW !== undefined && map.powerW) put(map.powerW, values.powerW);
  }

  async setRegisters(unitId: number, functionCode: 3 | 4, address: number, words: number[]): Promise<void> {
    this.mapOf(unitId);
    this.write(unitId, functionCode, address, words);
  }

  async setOnline(unitId: number, online: boolean): Promise<void> {
    if (online) this.offline.delete(unitId);
    else this.offline.add(unitId);
  }

  /** Once: a test may take the meter away itself before its cleanup runs. */
  close(): Promise<void> {
    this.closed ??= this.closeServer();
    return this.closed;
  }

  private mapOf(unitId: number): MeterRegisterMap {
    const map = this.options.units[unitId];
    if (!map) throw new Error(`the simulator has no unit ${unitId}`);
    return map;
  }

  private write(unitId: number, functionCode: 3 | 4, address: number, words: readonly number[]): void {
    words.forEach((w, i) => this.registers.set(`${unitId}/${functionCode}/${address + i}`, w & 0xffff));
  }

  private vector(): IServiceVector {
    const answer =
      (functionCode: 3 | 4) =>
      (address: number, count: number, unitId: number, cb: (err: Error | null, values: number[]) => void) => {
        const request: SimulatedRequest = { unitId, functionCode, address, count, receivedAt: Date.now() };
        this.requests.push(request);
        // Unknown or offline units stay silent, as on a real bus.
        if (!this.options.units[unitId] || this.offline.has(unitId)) return;
        const source = this.sources.get(unitId);
        if (source) this.show(unitId, source());
        this.inFlight += 1;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        const values = Array.from(
          { length: count },
          (_, i) => this.registers.get(`${unitId}/${functionCode}/${address + i}`) ?? 0,
        );
        setTimeout(() => {
          this.inFlight -= 1;
          request.answeredAt = Date.now();
          cb(null, values);
        }, this.options.responseDelayMs ?? 0);
      };
    const single =
      (functionCode: 3 | 4) => (address: number, unitId: number, cb: (err: Error | null, value: number) => void) =>
        answer(functionCode)(address, 1, unitId, (err, values) => cb(err, values[0] ?? 0));
    return {
      getMultipleHoldingRegisters: answer(3),
      getMultipleInputRegisters: answer(4),
      getHoldingRegister: single(3),
      getInputRegister: single(4),
    };
  }
}

/** The registers a value occupies under a spec: the inverse of the daemon's decoding, written independently. */
export function encodeRegister(spec: RegisterSpec, value: number): number[] {
  const words = REGISTER_WORDS[spec.type];
  const bytes = Buffer.alloc(words * 2);
  const raw = spec.type === 'float32' ? value / spec.scale : Math.round(value / spec.scale);
  switch (spec.type) {
    case 'float32':
      bytes.writeFloatBE(raw);
      break;
    case 'int16':
      bytes.writeInt16BE(raw);
      break;
    case 'uint16':
      bytes.writeUInt16BE(raw);
      break;
    case 'int32':
      bytes.writeInt32BE(raw);
      break;
    case 'uint32':
      bytes.writeUInt32BE(raw);
      break;
    case 'int64':
      bytes.writeBigInt64BE(BigInt(raw));
      break;
    case 'uint64':
      bytes.writeBigUInt64BE(BigInt(raw));
      break;
  }
  const big = Array.from({ length: words }, (_, i) => bytes.readUInt16BE(i * 2));
  return spec.wordOrder === 'little' ? big.reverse() : big;
}

/** A connected pair of pseudo-terminals from socat: the meter opens one end, chargegate the other, as on a cable. */
export interface PtyPair {
  meterSide: string;
  controllerSide: string;
  close(): Promise<void>;
}

export async function openPtyPair(dir: string): Promise<PtyPair> {
  const meterSide = path.join(dir, 'meter-tty');
  const controllerSide = path.join(dir, 'chargegate-tty');
  const socat = spawn('socat', [`pty,raw,echo=0,link=${meterSide}`, `pty,raw,echo=0,link=${controllerSide}`], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => socat.once('exit', () => resolve()));
  const deadline = Date.now() + 10_000;
  while (!(existsSync(meterSide) && existsSync(controllerSide))) {
    if (socat.exitCode !== null || Date.now() > deadline)
      throw new Error(`socat did not create ${meterSide} and ${controllerSide}`);
    await delay(20);
  }
  return {
    meterSide,
    controllerSide,
    async close() {
      if (socat.exitCode === null) socat.kill();
      await exited;
    },
  };
}

/**
 * A serial device server in transparent mode (the Moxa/USR/Waveshare setup): socat listens on a loopback TCP port
 * and forwards the bytes as they are onto the controller side of a pty pair, whose other side a meter answers on.
 * chargegate connects with `type: rtuovertcp`: raw RTU frames over TCP.
 */
export async function openDeviceServer(
  dir: string,
): Promise<{ meterSide: string; host: string; port: number; close(): Promise<void> }> {
  const pty = await openPtyPair(dir);
  const port = await freePort();
  // socat says when it listens (-d -d): a probe connection would open the serial side once more, and a second
  // opener of the pty, lingering while chargegate connects, can swallow the meter's first answers.
  const socat = spawn(
    'socat',
    ['-d', '-d', `TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork`, `FILE:${pty.controllerSide},raw,echo=0`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => socat.once('exit', () => resolve()));
  let said = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`socat did not listen on 127.0.0.1:${port}: ${said}`)), 10_000);
    socat.stderr.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    socat.once('exit', (code) => reject(new Error(`socat exited with ${code}: ${said}`)));
  });
  return {
    meterSide: pty.meterSide,
    host: '127.0.0.1',
    port,
    async close() {
      if (socat.exitCode === null) socat.kill();
      await exited;
      await pty.close();
    },
  };
}

/**
 * Whether an external program the interop tests need is installed. In CI (CI=true) a missing one is an error,
 * never a silent skip: .ci/run installs them.
 */
export function externalTool(command: string, args: string[] = ['-V']): boolean {
  const found = spawnSync(command, args, { stdio: 'ignore' }).error === undefined;
  if (!found && process.env.CI === 'true')
    throw new Error(`${command} is not installed; .ci/run installs the tools the tests use`);
  return found;
}
