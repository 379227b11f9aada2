import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const MAIN = path.join(ROOT, 'src/cli/main.ts');
const BUILT_MAIN = path.join(ROOT, 'dist/cli/main.js');

/**
 * The newest modification time of the files under dir, 0 if there is none. Not the compiler's build record: a build
 * refused for a type error writes it and no JavaScript.
 */
function newestChange(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile() && !entry.name.endsWith('.tsbuildinfo'))
      newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  return newest;
}

/**
 * How runCli starts the CLI: the built dist/, as installed, when it is newer than every source file (`npm test`
 * builds first), else the sources through tsx. tsx doubles a CLI start's CPU time (~1 s instead of ~0.5 s), and the
 * in-process lane starts the CLI hundreds of times. Decided once per test file.
 */
const CLI_ENTRY = ((): string[] => {
  try {
    if (newestChange(path.join(ROOT, 'dist')) >= newestChange(path.join(ROOT, 'src'))) return [BUILT_MAIN];
  } catch {
    // No dist/ yet: the sources.
  }
  return ['--import', 'tsx', MAIN];
})();

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the chargegate CLI (CLI_ENTRY: built or from source) and collects its output. */
export function runCli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...CLI_ENTRY, ...args],
      { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    // What a command reads from stdin (a password piped in); without it, stdin ends at once.
    child.stdin?.end(options.input ?? '');
  });
}

/** Runs the CLI with --json and parses its one JSON document. */
export async function runCliJson<T = unknown>(
  args: string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; data: T; stderr: string }> {
  const result = await runCli([...args, '--json'], options);
  let data: T;
  try {
    data = JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${result.code}): ${result.stdout}\n${result.stderr}`);
  }
  return { code: result.code, data, stderr: result.stderr };
}

export interface SpawnedDaemon {
  child: ChildProcess;
  /** Its stdout lines (JSON log lines) and stderr chunks, still growing. */
  logs: string[];
  /** The ports from its `chargegate ready` line, and the OCPP URL on loopback. */
  ready: { httpPort: number; ocppPort: number; ocppUrl: string };
}

/**
 * Starts `chargegate run` as its own process (for kill -9 and signal tests); resolves once it logs ready.
 * `built` runs the compiled dist/ instead of the sources, as installed (the benchmarks measure that).
 * `readyTimeoutMs` kills a daemon that never gets ready, so it cannot outlive the caller.
 * `nodeArgs` go to node itself (e.g. --cpu-prof, which NODE_OPTIONS refuses).
 */
export function spawnDaemon(
  configPath: string,
  options: { env?: NodeJS.ProcessEnv; built?: boolean; readyTimeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<SpawnedDaemon> {
  const entry = options.built ? [BUILT_MAIN] : ['--import', 'tsx', MAIN];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry, 'run', '--config', configPath], {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  return new Promise((resolve, reject) => {
    const timer =
      options.readyTimeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`daemon not ready within ${options.readyTimeoutMs} ms:\n${logs.join('\n')}`));
          }, options.readyTimeoutMs);
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        logs.push(line);
        if (line.includes('"chargegate ready"')) {
          clearTimeout(timer);
          const { httpPort, ocppPort } = JSON.parse(line) as { httpPort: number; ocppPort: number };
          resolve({ child, logs, ready: { httpPort, ocppPort, ocppUrl: `ws://127.0.0.1:${ocppPort}/ocpp` } });
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code} before ready:\n${logs.join('\n')}`)));
  });
}

/** How a child process ended, once it has (at once if it already has). */
export function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** The Node.js options the systemd unit starts the daemon with (its ExecStart): the bench and the memory tests run it as installed. */
export function installedNodeArgs(): string[] {
  const unit = readFileSync(path.join(ROOT, 'systemd/chargegate.service'), 'utf8');
  const execStart = /^ExecStart=(.*)$/m.exec(unit)?.[1]?.split(/\s+/) ?? [];
  const main = execStart.findIndex((arg) => arg.endsWith('/dist/cli/main.js'));
  if (main < 1) throw new Error('systemd/chargegate.service: no ExecStart running dist/cli/main.js');
  return execStart.slice(1, main);
}
