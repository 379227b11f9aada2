import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A unix datagram socket standing where systemd's NOTIFY_SOCKET would, recording every sd_notify message.
 * Node cannot bind AF_UNIX datagram sockets, so python3's socket module holds it in a child process.
 * Like systemd it closes the descriptors sent along (systemd-notify's BARRIER=1 pipe), which releases the sender.
 */
const RECEIVER = `
import array, json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print(json.dumps({"listening": True}), flush=True)
while True:
    data, ancillary, _flags, _addr = s.recvmsg(65536, socket.CMSG_SPACE(64 * 4))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = array.array("i")
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
            for fd in fds:
                os.close(fd)
    print(json.dumps({"message": data.decode()}), flush=True)
`;

export interface NotifySocket {
  /** The value for NOTIFY_SOCKET. */
  path: string;
  /** Every message received so far, each as its `VAR=VALUE` lines. */
  messages: string[][];
  /**
   * Resolves with the first message at index `from` or later (received now or later) that has this `VAR=VALUE` line.
   */
  waitFor(assignment: string, options?: { from?: number; timeoutMs?: number }): Promise<string[]>;
  close(): Promise<void>;
}

export async function openNotifySocket(): Promise<NotifySocket> {
  const dir = mkdtempSync(path.join(tmpdir(), 'chargegate-notify-'));
  const socketPath = path.join(dir, 'notify.sock');
  const child: ChildProcess = spawn('python3', ['-c', RECEIVER, socketPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  const messages: string[][] = [];
  const waiters: Array<{ assignment: string; resolve: (message: string[]) => void }> = [];
  await new Promise<void>((resolve, reject) => {
    let buffered = '';
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`notify socket receiver exited with ${code}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const record = JSON.parse(line) as { listening?: true; message?: string };
        if (record.listening) resolve();
        if (record.message === undefined) continue;
        const message = record.message.split('\n');
        messages.push(message);
        for (const waiter of waiters.filter((w) => message.includes(w.assignment))) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
      }
    });
  });
  return {
    path: socketPath,
    messages,
    waitFor(assignment, { from = 0, timeoutMs = 20_000 } = {}) {
      const seen = messages.slice(from).find((m) => m.includes(assignment));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${assignment} within ${timeoutMs} ms; got ${JSON.stringify(messages)}`)),
          timeoutMs,
        );
        waiters.push({
          assignment,
          resolve: (message) => {
            clearTimeout(timer);
            resolve(message);
          },
        });
      });
    },
    async close() {
      child.removeAllListeners('exit');
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill();
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
