import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sleep } from './measure.js';

/** What a process asked of its files while traced: syscalls and bytes by file name (`chargegate.db-wal`, ...). */
export interface WriteTrace {
  /** fsync and fdatasync calls, by file. */
  syncs: Record<string, number>;
  /** pwrite64 calls and the bytes they asked to write, by file. */
  writes: Record<string, { calls: number; bytes: number }>;
}

const SYSCALLS = ['fsync', 'fdatasync', 'pwrite64'];

/**
 * Counts a running process's fsyncs and positioned writes from outside, with strace attached to all its threads
 * (the daemon is not ours to instrument). undefined when this machine has no strace or may not attach: the figures
 * that need it then say so instead.
 */
export async function traceWrites(pid: number): Promise<{ stop(): Promise<WriteTrace> } | undefined> {
  if (spawnSync('strace', ['-V']).status !== 0) return undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'chargegate-bench-strace-'));
  const out = path.join(dir, 'trace');
  // -y names each descriptor's file; -s 0 leaves the written data out.
  const strace = spawn(
    'strace',
    ['-f', '-y', '-s', '0', '-e', `trace=${SYSCALLS.join(',')}`, '-o', out, '-p', `${pid}`],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  strace.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const attached = await attachedOrExited(strace, () => stderr);
  if (!attached) {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return {
    async stop() {
      const exited = once(strace, 'exit');
      strace.kill('SIGINT');
      await exited;
      try {
        return parseTrace(readFileSync(out, 'utf8'));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** strace says "Process N attached" once per thread; it exits at once when it may not attach. */
async function attachedOrExited(strace: ChildProcess, stderr: () => string): Promise<boolean> {
  for (let waited = 0; waited < 5000; waited += 50) {
    if (strace.exitCode !== null) return false;
    if (stderr().includes('attached')) {
      // The other threads are attached within moments of the first.
      await sleep(200);
      return strace.exitCode === null;
    }
    await sleep(50);
  }
  strace.kill('SIGKILL');
  return false;
}

/**
 * Lines like `123 pwrite64(17</tmp/x/chargegate.db-wal>, ""..., 1048, 4152) = 1048` or `123 fdatasync(17</...>`
 * (a call another thread interrupts ends in `<unfinished ...>`; its arguments are already on the line).
 */
function parseTrace(text: string): WriteTrace {
  const trace: WriteTrace = { syncs: {}, writes: {} };
  for (const line of text.split('\n')) {
    const call = /^\d+\s+(fsync|fdatasync|pwrite64)\(\d+<([^>]*)>(?:, ""\.*, (\d+))?/.exec(line);
    if (!call) continue;
    const [, name, file, size] = call;
    const key = path.basename(file!);
    if (name === 'pwrite64') {
      const entry = (trace.writes[key] ??= { calls: 0, bytes: 0 });
      entry.calls += 1;
      entry.bytes += Number(size ?? 0);
    } else trace.syncs[key] = (trace.syncs[key] ?? 0) + 1;
  }
  return trace;
}

export function sum(values: Iterable<number>): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}
