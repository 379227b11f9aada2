import { execFile } from 'node:child_process';
import { chmodSync, existsSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { localSocketPath } from '../../src/cli/local-socket.js';
import { daemonForTest, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';

/** The uid and gid of `nobody`: a second user on the box. */
const NOBODY = 65534;

/** What a process running as `uid` gets when it connects to `socketPath`: 'connected' or its errno. */
function connectAs(uid: number, socketPath: string): Promise<string> {
  const script = `require('node:net').connect(process.argv[1]).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(0); });`;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', script, socketPath], { uid, gid: uid }, (err, stdout) =>
      err ? reject(err) : resolve(stdout.trim()),
    ),
  );
}

describe('the local channel: the CLI reaches the running daemon on a Unix socket in dataDir', () => {
  it(
    'is created at start with mode 0600, owned by the daemon user, and refuses another user; removed at stop',
    async () => {
      const t = await daemonForTest();
      const socketPath = localSocketPath(t.temp.dataDir);
      const stat = statSync(socketPath);
      expect(stat.isSocket()).toBe(true);
      expect(stat.mode & 0o777).toBe(0o600);
      expect(stat.uid).toBe(process.getuid!());
      expect(await connectAs(process.getuid!(), socketPath)).toBe('connected');
      if (process.getuid!() === 0) {
        // Let the second user reach the socket itself, so only its own mode stands in the way.
        for (const dir of [t.temp.dir, t.temp.dataDir]) chmodSync(dir, 0o755);
        expect(await connectAs(NOBODY, socketPath)).toBe('EACCES');
      }
      await t.stop();
      expect(existsSync(socketPath)).toBe(false);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
