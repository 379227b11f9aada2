import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import { majorOf, pinnedNodeVersion } from '../../src/cli/runtime.js';
import { ROOT, runCli, spawnDaemon } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { tempSite } from '../support/temp-site.js';

const run = promisify(execFile);

describe('the Node.js chargegate runs on', () => {
  it('is the pinned runtime in the test process, its workers and the `node` an npm script finds first on the PATH', () => {
    const pinned = pinnedNodeVersion();
    expect(majorOf(pinned)).toBe(24);
    // A PATH that finds another node first would run the whole suite on it: this fails then.
    expect(process.versions.node).toBe(pinned);
    expect(execFileSync('node', ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim()).toBe(pinned);
    expect(path.relative(ROOT, execFileSync('sh', ['-c', 'command -v node'], { encoding: 'utf8' }).trim())).toBe(
      'node_modules/.bin/node',
    );
  });

  it('is what the CLI requires: another major exits 1 with one line that says which node to use', async () => {
    const pinned = pinnedNodeVersion();
    const others = ['/usr/bin/node', '/usr/local/bin/node'].filter((node) => {
      try {
        return majorOf(execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' })) !== majorOf(pinned);
      } catch {
        return false;
      }
    });
    // The machines this project runs on have Node 20 for npm; the check below needs one such node.
    if (others.length === 0) {
      expect(process.env.CI, 'no node of another major on this machine').not.toBe('true');
      return;
    }
    const result = await run(
      others[0]!,
      [path.join(ROOT, 'dist/cli/main.js'), 'check-config', '--config', 'config/default.yaml'],
      { cwd: ROOT },
    ).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^chargegate: this is Node\\.js \\d+\\.\\d+\\.\\d+ .*runs on the Node\\.js ${pinned.replace(/\./g, '\\.')} it brings`,
      ),
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it(
    'runs the CLI on the pinned runtime',
    async () => {
      const { code, stdout } = await runCli(['check-config', '--config', 'config/default.yaml']);
      expect(code).toBe(0);
      expect(stdout).toContain('ok');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it('starts and stops the built daemon 20 times in a row with no abort', async () => {
    const temp = tempSite({ log: { level: 'info' } });
    onTestFinished(() => temp.cleanup());
    for (let i = 0; i < 20; i++) {
      const { child, logs } = await spawnDaemon(temp.configPath, { built: true, readyTimeoutMs: 30_000 });
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      child.kill('SIGTERM');
      const { code, signal } = await exited;
      // The ready line says which Node.js the daemon runs on, for an installer reading the journal.
      expect(JSON.parse(logs.find((l) => l.includes('"chargegate ready"'))!).node).toBe(pinnedNodeVersion());
      expect({
        start: i,
        code,
        signal,
        aborted: logs.some((l) => /Assertion failed|Aborted|Segmentation/.test(l)),
      }).toEqual({ start: i, code: 0, signal: null, aborted: false });
    }
  }, 300_000);
});
