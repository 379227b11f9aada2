import { execFile } from 'node:child_process';
import { chmodSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localSocketPath } from '../../src/cli/local-socket.js';
import { MAIN, ROOT, runCli } from '../support/cli.js';
import { daemonForTest, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { tempSiteForTest } from '../support/for-test.js';

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

/** The CLI run from source as `uid`: its exit code and stderr. */
function cliAs(uid: number, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', MAIN, ...args],
      { cwd: ROOT, uid, gid: uid, env: { ...process.env, HOME: '/tmp' } },
      (err, _stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stderr }),
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
        const cli = await cliAs(NOBODY, ['station', 'reset', 'CP001', '--config', t.temp.configPath]);
        expect(cli).toEqual({
          code: 1,
          stderr: `chargegate: permission denied: run this as the user the daemon runs as (the data dir owner), or root (${socketPath})\n`,
        });
      }
      await t.stop();
      expect(existsSync(socketPath)).toBe(false);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a dataDir too long for a socket path: `run` and `check-config` exit 2 in one line naming dataDir',
    async () => {
      const site = tempSiteForTest();
      const dataDir = path.join(site.dir, 'd'.repeat(120));
      site.write({ dataDir });
      const problem = `dataDir: the local socket ${path.join(dataDir, 'chargegate.sock')} would be longer than the 107 bytes a Unix socket's path may have: choose a shorter dataDir`;
      const result = await runCli(['run', '--config', site.configPath]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`chargegate: ${site.configPath}: ${problem}\n`);
      // The check systemctl reload runs first says it too, before a restart would fail on it.
      const checked = await runCli(['check-config', '--config', site.configPath]);
      expect(checked.code).toBe(2);
      expect(checked.stderr).toBe(`chargegate: ${site.configPath}: ${problem}\n`);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
