import { spawn, spawnSync } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually } from '../support/daemon.js';
import { MAIN, ROOT } from '../support/cli.js';
import { tempSiteForTest } from '../support/for-test.js';

describe('log lines: journald priorities under systemd, human-readable on a terminal', () => {
  it('with stdout on the journal (JOURNAL_STREAM names it), each JSON line starts with its syslog priority', async () => {
    const t = tempSiteForTest({
      log: { level: 'info' },
      ocpp: { host: '127.0.0.1', port: 0, path: '/ocpp', securityProfile: 0 },
    });
    const file = path.join(t.dir, 'journal.log');
    const fd = openSync(file, 'w');
    const { dev, ino } = fstatSync(fd);
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'run', '--config', t.configPath], {
      cwd: ROOT,
      env: { ...process.env, JOURNAL_STREAM: `${dev}:${ino}` },
      stdio: ['ignore', fd, 'inherit'],
    });
    closeSync(fd);
    try {
      const lines = () => readFileSync(file, 'utf8').split('\n').filter(Boolean);
      const ready = await eventually(() => lines().find((l) => l.includes('"chargegate ready"')), 30_000, 'ready line');
      expect(ready).toMatch(/^<6>\{"level":30,/);
      const port = (JSON.parse(ready.slice(3)) as { ocppPort: number }).ocppPort;
      // A station that offers no OCPP subprotocol is refused with a warning.
      const socket = new WebSocket(`ws://127.0.0.1:${port}/ocpp/CP001`);
      socket.on('error', () => undefined);
      const warning = await eventually(
        () => lines().find((l) => l.includes('offers neither the ocpp2.0.1 nor the ocpp1.6 subprotocol')),
        10_000,
        'warning line',
      );
      expect(warning).toMatch(/^<4>\{"level":40,/);
      expect(lines().every((l) => /^<\d>\{/.test(l))).toBe(true);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });

  it('on a terminal the lines are human-readable, not JSON', () => {
    const t = tempSiteForTest({ log: { level: 'info' } });
    // script(1) gives the daemon a pseudo-terminal as stdout; the daemon is stopped by timeout once ready.
    const command = `timeout -s TERM 8 ${process.execPath} --import tsx ${MAIN} run --config ${t.configPath}`;
    const result = spawnSync('script', ['-qec', command, '/dev/null'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    const output = stripVTControlCharacters(result.stdout);
    expect(output).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: chargegate ready/m);
    expect(output).not.toMatch(/\{"level":/);
  });
});
