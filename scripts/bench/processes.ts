import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { READY, type WorkerApi, type WorkerReply } from './worker-protocol.js';

/** A forked worker process whose commands are typed after the worker module's own API object. */
export interface WorkerHandle<Api extends WorkerApi> {
  readonly name: string;
  readonly pid: number;
  call<K extends keyof Api & string>(command: K, payload: Parameters<Api[K]>[0]): Promise<Awaited<ReturnType<Api[K]>>>;
  /** Ends the process now, so it takes no CPU from what is measured next. */
  stop(): Promise<void>;
}

/**
 * Every process a scenario starts, so that the scenario can always end them all, whether it finished or threw.
 * The daemon is added too: nothing a bench run starts may outlive it.
 */
export class ProcessGroup {
  private readonly children: ChildProcess[] = [];

  /** profileDir: every worker writes a V8 CPU profile there when it exits (`npm run bench -- --profile DIR`). */
  constructor(
    private readonly workerDir: string,
    private readonly profileDir?: string,
  ) {}

  adopt(child: ChildProcess): void {
    this.children.push(child);
  }

  /** Forks `<workerDir>/<module>.js` (compiled, so no loader inflates its memory) and waits for it to be ready. */
  async startWorker<Api extends WorkerApi>(module: string, name = module): Promise<WorkerHandle<Api>> {
    const execArgv = this.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(this.profileDir, name)}`] : [];
    const child = fork(`${this.workerDir}/${module}.js`, [], {
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      serialization: 'advanced',
      execArgv,
    });
    this.adopt(child);
    const stderr: string[] = [];
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const pending = new Map<
      number,
      { resolve: (value: unknown) => void; reject: (err: Error) => void; command: string }
    >();
    let exited: Error | undefined;
    child.on('message', (message: WorkerReply | typeof READY) => {
      if (message === READY) return;
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      if ('error' in message) waiter.reject(new Error(`${name}.${waiter.command}: ${message.error}`));
      else waiter.resolve(message.result);
    });
    child.once('exit', (code, signal) => {
      exited = new Error(
        `${name} exited (${signal ?? code})${stderr.length ? `: ${stderr.join('').slice(-2000)}` : ''}`,
      );
      for (const waiter of pending.values()) waiter.reject(exited);
      pending.clear();
    });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: unknown) => {
        if (message !== READY) return;
        child.off('exit', onExit);
        resolve();
      };
      const onExit = () => {
        child.off('message', onMessage);
        reject(exited ?? new Error(`${name} exited before it was ready`));
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
    let nextId = 1;
    return {
      name,
      pid: child.pid!,
      call(command, payload) {
        if (exited) return Promise.reject(exited);
        const id = nextId++;
        return new Promise((resolve, reject) => {
          pending.set(id, { resolve: resolve as (value: unknown) => void, reject, command });
          child.send({ id, command, payload });
        });
      },
      stop: () => terminate(child, 5000),
    };
  }

  /** SIGTERM, then SIGKILL for whatever has not exited within the grace period. */
  async stopAll(graceMs = 5000): Promise<void> {
    const children = this.children.splice(0);
    await Promise.all(children.map((child) => terminate(child, graceMs)));
  }
}

/** SIGTERM, then SIGKILL when the process has not exited within graceMs. */
export async function terminate(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exit = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exit;
  clearTimeout(timer);
}

export { freePort } from '../../test/support/free-port.js';
