/**
 * The runner drives each load generator, receiver and baseline server as its own process and talks to it over
 * the IPC channel of child_process.fork: one request, one reply, matched by id.
 */

// Handlers take one structured-clone payload and return one; `never` accepts every worker's own signatures.
export type WorkerApi = Record<string, (payload: never) => unknown>;

export interface WorkerRequest {
  id: number;
  command: string;
  payload: unknown;
}

export type WorkerReply = { id: number; result: unknown } | { id: number; error: string };

export const READY = 'bench-worker-ready';

/** Worker side: answers the runner's requests; exits when the runner goes away so no load generator is orphaned. */
export function serveWorker(api: WorkerApi): void {
  const send = process.send?.bind(process);
  if (!send) throw new Error('a bench worker runs as a forked child of the bench runner');
  process.on('message', (message: WorkerRequest) => {
    const handler = api[message.command];
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown command ${message.command}`);
        // The payload crossed a process boundary: its type is the contract between runner and worker.
        return handler(message.payload as never);
      })
      .then(
        (result) => send({ id: message.id, result: result ?? null } satisfies WorkerReply),
        (err: unknown) =>
          send({
            id: message.id,
            error: err instanceof Error ? (err.stack ?? err.message) : String(err),
          } satisfies WorkerReply),
      );
  });
  process.on('disconnect', () => process.exit(0));
  // A normal exit, unlike death by signal, writes the --cpu-prof profile.
  process.on('SIGTERM', () => process.exit(0));
  send(READY);
}
