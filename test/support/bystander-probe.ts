import { spawn } from 'node:child_process';
import path from 'node:path';
import { exitOf, ROOT } from './cli.js';

/**
 * Another station and a /health reader of a daemon under load, in a process of their own: timed from the test
 * process, whose event loop is busy sending the flood, they would measure the test rather than the daemon.
 */
export interface BystanderProbe {
  /** Ends the probing (a round in flight finishes first) and returns the slowest answers and the rounds done. */
  stop(): Promise<{ slowestHealthMs: number; slowestHeartbeatMs: number; samples: number }>;
  /** Kills the probe at once (cleanup after a failed test). */
  kill(): void;
}

export interface BystanderProbeOptions {
  httpPort: number;
  ocppUrl: string;
  /** A station of the site config other than the ones under test (it connects and boots). */
  identity: string;
  password?: string;
  /** Pause between rounds of a Heartbeat then a GET /health (default 100 ms). */
  intervalMs?: number;
}

/** The bound #41 sets on another station's and /health's answers during a flood. */
export const STALL_BOUND_MS = 1000;
/** Rounds a probe does at the least during a flood of seconds (a round takes about 100 ms): it did probe. */
export const MIN_PROBE_ROUNDS = 5;

const CHILD = path.join(ROOT, 'test/support/bystander-probe-child.ts');

/** Starts the probe; resolves once its station has booted and the probing runs. */
export function startBystanderProbe(options: BystanderProbeOptions): Promise<BystanderProbe> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify({ intervalMs: 100, ...options })], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const output: string[] = [];
  let buffered = '';
  let onLine = (): void => undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const complete = buffered.split('\n');
    buffered = complete.pop() ?? '';
    lines.push(...complete);
    onLine();
  });
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = exitOf(child);
  // Line `index` of the probe's stdout, or a failure with what it wrote to stderr.
  const nextLine = (index: number, what: string): Promise<string> =>
    new Promise((resolve, reject) => {
      onLine = () => {
        if (lines.length > index) resolve(lines[index]!);
      };
      onLine();
      void exited.then(({ code, signal }) =>
        reject(new Error(`bystander probe exited (${code ?? signal}) before ${what}:\n${output.join('')}`)),
      );
    });
  return nextLine(0, 'ready').then(() => ({
    async stop() {
      const result = nextLine(1, 'its result');
      child.stdin.end();
      return JSON.parse(await result) as Awaited<ReturnType<BystanderProbe['stop']>>;
    },
    kill: () => child.kill('SIGKILL'),
  }));
}
