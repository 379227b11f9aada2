import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { localSocketPath } from '../../src/cli/local-socket.js';
import { runCli } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { spawnDaemonForTest, tempSiteForTest } from '../support/for-test.js';
import { requestOverSocket } from '../support/local-socket.js';

/** The HTTP status of GET /health on the daemon's local channel (the socket the CLI's live commands use). */
async function healthOverSocket(socketPath: string): Promise<number> {
  return (await requestOverSocket(socketPath, 'GET', '/health')).status;
}

/** Contract section 7: one daemon per data directory. */
describe('a second chargegate run on the same data directory', () => {
  it(
    'exits 1 with one line naming the directory and the running process; the first keeps serving',
    async () => {
      const temp = tempSiteForTest({ log: { level: 'info' } });
      const first = await spawnDaemonForTest(temp.configPath);

      const second = await runCli(['run', '--config', temp.configPath]);
      expect(second.code).toBe(1);
      expect(second.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^chargegate: ${path.resolve(temp.dataDir).replace(/[/.]/g, '\\$&')} is in use by another chargegate \\(pid ${first.child.pid}, running since .+\\): stop that one first`,
          ),
        ),
      ]);
      expect((await fetch(`http://127.0.0.1:${first.ready.httpPort}/health`)).status).toBe(200);
      // The second one stopped at the lock, before it could touch the first one's socket.
      expect(await healthOverSocket(localSocketPath(temp.dataDir))).toBe(200);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'starts once the holder is gone, also after kill -9 (the OS releases the lock, the next start replaces the socket)',
    async () => {
      const temp = tempSiteForTest({ log: { level: 'info' } });
      const first = await spawnDaemonForTest(temp.configPath);
      const killed = new Promise((resolve) => first.child.once('exit', resolve));
      first.child.kill('SIGKILL');
      await killed;
      const socketPath = localSocketPath(temp.dataDir);
      expect(existsSync(socketPath)).toBe(true);
      await expect(healthOverSocket(socketPath)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

      const next = await spawnDaemonForTest(temp.configPath, { readyTimeoutMs: 60_000 });
      expect((await fetch(`http://127.0.0.1:${next.ready.httpPort}/health`)).status).toBe(200);
      expect(next.logs.filter((l) => l.includes('socket left by an earlier run replaced'))).toHaveLength(1);
      expect(await healthOverSocket(socketPath)).toBe(200);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
