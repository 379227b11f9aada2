import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { Keystore } from '../../src/keystore/index.js';
import { DATABASE_FILE, openDatabase } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';
import { tempSiteForTest } from '../support/for-test.js';
import { keystoreTemplateForDaemons } from '../support/keystore-template.js';
import type { TempSite } from '../support/temp-site.js';

/** contract section 7: every failure at start is one line naming the path or port and what to do, exit 1. */
describe('chargegate run: failures at start are one clear line', () => {
  const site = tempSiteForTest;
  const run = (t: TempSite, env: NodeJS.ProcessEnv = {}) => runCli(['run', '--config', t.configPath], { env });
  const expectOneLine = (result: { code: number; stderr: string }, pattern: RegExp) => {
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  };

  it('a port in use names the port and asks whether chargegate already runs', async () => {
    const busy = createServer();
    onTestFinished(() => void busy.close());
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    const t = site({ http: { host: '127.0.0.1', port } });
    // The keys a gateway in service has: the daemon opens its keystore before it listens, and would make them first.
    (await keystoreTemplateForDaemons({}, loadConfig(t.configPath)))?.copyInto(t.dataDir);
    expectOneLine(
      await run(t),
      new RegExp(
        `^chargegate: cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use\\. Is chargegate already running\\? .*http\\.port$`,
      ),
    );
  });

  it('a data dir that is a file names the path', async () => {
    const t = site();
    writeFileSync(t.dataDir, 'not a directory');
    expectOneLine(
      await run(t),
      new RegExp(
        `^chargegate: data dir ${t.dataDir.replaceAll('/', '\\/')}: .*dataDir must be a directory the chargegate user can write$`,
      ),
    );
  });

  it('a damaged database names the file and what to do', async () => {
    const t = site();
    mkdirSync(t.dataDir, { recursive: true });
    writeFileSync(path.join(t.dataDir, DATABASE_FILE), 'x'.repeat(8192));
    expectOneLine(
      await run(t),
      /^chargegate: database .*chargegate\.db is damaged \(file is not a database\): restore it from a backup, or move it aside/,
    );
  });

  it('a database a newer chargegate migrated names the file and what to do', async () => {
    const t = site();
    const db = openDatabase(t.dataDir);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, ?, ?)').run(
      'from the future',
      new Date().toISOString(),
    );
    db.close();
    expectOneLine(
      await run(t),
      /^chargegate: database .*chargegate\.db was migrated by a newer chargegate \(schema version 99; .*restore the copy of the data dir made before the upgrade$/,
    );
  });

  it('any command on a damaged database or one a newer chargegate migrated says so in one line too', async () => {
    const damaged = site();
    mkdirSync(damaged.dataDir, { recursive: true });
    writeFileSync(path.join(damaged.dataDir, DATABASE_FILE), 'x'.repeat(8192));
    expectOneLine(
      await runCli(['station', 'list', '--config', damaged.configPath]),
      /^chargegate: database .*chargegate\.db is damaged/,
    );

    const newer = site();
    const db = openDatabase(newer.dataDir);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, ?, ?)').run(
      'from the future',
      new Date().toISOString(),
    );
    db.close();
    expectOneLine(
      await runCli(['deadletter', 'list', '--config', newer.configPath]),
      /^chargegate: database .*was migrated by a newer chargegate/,
    );
  });

  it('a wrong keystore passphrase says so, naming the keystore file', async () => {
    const t = site();
    // The keystore as the daemon or `keys list` makes it, encrypted with the first passphrase.
    await Keystore.open({ dataDir: t.dataDir, passphrase: 'right one', retiredKeyGraceS: 86_400 });
    expectOneLine(
      await run(t, { CHARGEGATE_KEYSTORE_PASSPHRASE: 'wrong one' }),
      /^chargegate: .*keystore\.json: .*wrong keystore passphrase/,
    );
  });

  it('--version prints the version', async () => {
    const result = await runCli(['--version']);
    expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
  });
});
