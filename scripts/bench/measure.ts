import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Milliseconds on CLOCK_MONOTONIC. Linux keeps one monotonic clock for the whole machine, so a time taken in a
 * load generator and one taken in the receiver process can be subtracted.
 */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Resolves at an absolute nowMs() instant, so that several processes can start a phase together. */
export function sleepUntil(atMs: number): Promise<void> {
  return sleep(atMs - nowMs());
}

/** Nearest-rank percentile of unsorted samples; null when there are none. */
export function percentile(samples: ArrayLike<number>, p: number): number | null {
  if (samples.length === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? null;
}

export function median(samples: ArrayLike<number>): number | null {
  return percentile(samples, 50);
}

export interface ProcessStats {
  rssMB: number;
  /** VmHWM: the highest RSS the process has had since it started. */
  peakRssMB: number;
  /** User + system CPU time consumed so far. */
  cpuS: number;
  /**
   * Bytes the process caused to be written to storage so far (/proc/PID/io write_bytes: page cache flushes included).
   */
  writtenBytes: number;
}

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** Memory and CPU of any process on this machine, read from /proc (the daemon is not ours to instrument). */
export function processStats(pid: number): ProcessStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const writtenBytes = Number(/^write_bytes:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);
  return { rssMB: kB('VmRSS') / 1024, peakRssMB: kB('VmHWM') / 1024, cpuS: ticks / ticksPerSecond, writtenBytes };
}

/**
 * User + system CPU seconds one thread of a process has used so far (/proc/PID/task/TID/stat). A Node.js process's
 * main thread has the process's own id as its thread id.
 */
export function threadCpuS(pid: number, tid = pid): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** The CPU a process spent while fn ran, as a percentage of one core. */
export async function watchProcess<T>(pid: number, fn: () => Promise<T>): Promise<{ result: T; cpuPercent: number }> {
  const before = processStats(pid);
  const startedAt = nowMs();
  const result = await fn();
  const after = processStats(pid);
  const elapsedS = (nowMs() - startedAt) / 1000;
  return { result, cpuPercent: (100 * (after.cpuS - before.cpuS)) / elapsedS };
}

/** The soft limit on open files, which bounds how many stations one process can hold. */
export function openFilesLimit(): number | null {
  const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  if (!line?.[1]) return null;
  return line[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(line[1]);
}
