import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from './cli.js';
import type { MeterValues, ScriptableMeter } from './meter-simulator.js';

/** Debian's interpreter: python3-pymodbus is installed for it, whatever python3 comes first on PATH. */
export const DEBIAN_PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(ROOT, 'test/support/pymodbus-meter.py');

export type PymodbusTransport = { tcp: string } | { rtuOverTcp: string } | { rtu: string; baudRate?: number };

/**
 * The SDM630-like meter of pymodbus-meter.py, driven through the same ScriptableMeter interface as our own
 * simulator: every command waits for the script's acknowledgement, so the next poll sees the new registers.
 */
export class PymodbusMeter implements ScriptableMeter {
  private readonly waiting: Array<(line: string) => void> = [];
  private readonly exited: Promise<void>;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    lines: AsyncIterableIterator<string>,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    void (async () => {
      for await (const line of lines) this.waiting.shift()?.(line);
    })();
  }

  static async start(transport: PymodbusTransport, units: number[] = [1]): Promise<PymodbusMeter> {
    const where =
      'tcp' in transport
        ? ['--tcp', transport.tcp]
        : 'rtuOverTcp' in transport
          ? ['--rtu-over-tcp', transport.rtuOverTcp]
          : ['--rtu', transport.rtu, '--baud', String(transport.baudRate ?? 9600)];
    const child = spawn(DEBIAN_PYTHON, [SCRIPT, ...where, '--units', units.join(',')], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const stderr: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const first = await Promise.race([
      lines.next(),
      new Promise<never>((_, reject) =>
        child.once('exit', (code) => reject(new Error(`pymodbus-meter.py exited with ${code}: ${stderr.join('')}`))),
      ),
    ]);
    const ready = JSON.parse(String(first.value)) as { ready: boolean; port: number };
    return new PymodbusMeter(child, ready.port, lines);
  }

  set(unitId: number, values: MeterValues): Promise<void> {
    return this.command({ unit: unitId, ...values });
  }

  setRegisters(unitId: number, functionCode: 3 | 4, address: number, words: number[]): Promise<void> {
    if (functionCode !== 4) throw new Error('pymodbus-meter.py serves input registers only (an SDM630 map)');
    return this.command({ unit: unitId, registers: { [address]: words } });
  }

  setOnline(unitId: number, online: boolean): Promise<void> {
    return this.command({ unit: unitId, online });
  }

  async close(): Promise<void> {
    this.child.stdin!.end();
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    await this.exited;
    clearTimeout(killer);
  }

  private async command(command: object): Promise<void> {
    const answer = new Promise<string>((resolve) => this.waiting.push(resolve));
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    const reply = JSON.parse(await answer) as { ok: boolean; error?: string };
    if (!reply.ok) throw new Error(`pymodbus-meter.py refused ${JSON.stringify(command)}: ${reply.error}`);
  }
}
