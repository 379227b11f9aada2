import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { spawnDaemonForTest, tempSiteForTest } from '../support/for-test.js';

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
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'starts once the holder is gone, also after kill -9 (the OS releases the lock)',
    async () => {
      const temp = tempSiteForTest({ log: { level: 'info' } });
      const first = await spawnDaemonForTest(temp.configPath);
      const killed = new Promise((resolve) => first.child.once('exit', resolve));
      first.child.kill('SIGKILL');
      await killed;

      const next = await spawnDaemonForTest(temp.configPath, { readyTimeoutMs: 60_000 });
      expect((await fetch(`http://127.0.0.1:${next.ready.httpPort}/health`)).status).toBe(200);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
