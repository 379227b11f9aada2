import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Applications, type Application } from '../../src/applications/index.js';
import { openDatabase, type Database } from '../../src/store/index.js';
import { runCli, runCliJson } from '../support/cli.js';
import { tempSite, type TempSite } from '../support/temp-site.js';

/** Each CLI run is a fresh Node process compiling TypeScript: seconds apiece on a busy machine. */
describe('chargegate app', { timeout: 120_000 }, () => {
  let temp: TempSite;
  const cli = (...args: string[]) => runCli([...args, '--config', temp.configPath]);
  const cliJson = <T>(...args: string[]) => runCliJson<T>([...args, '--config', temp.configPath]);
  const withDb = <T>(fn: (db: Database) => T): T => {
    const db = openDatabase(temp.dataDir);
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };

  beforeAll(() => {
    temp = tempSite({
      groups: [
        { id: 'ops', scope: 'company:acme', permissions: ['charge-points:read', 'charge-points:control'] },
        { id: 'viewer', scope: 'site:s1', permissions: ['charge-points:read'] },
      ],
    });
  });
  afterAll(() => temp.cleanup());

  it('create prints clientId and clientSecret once (JSON keys exactly these); only a scrypt hash is stored', async () => {
    const created = await cliJson<Record<string, string>>(
      'app',
      'create',
      '--name',
      'Partner A',
      '--group',
      'ops',
      '--group',
      'viewer',
    );
    expect(created.code).toBe(0);
    expect(Object.keys(created.data)).toEqual(['clientId', 'clientSecret']);
    const { clientId, clientSecret } = created.data as { clientId: string; clientSecret: string };
    const row = withDb((db) => db.prepare('SELECT * FROM applications WHERE client_id = ?').get(clientId)) as {
      secret_hash: string;
      group_ids: string;
    };
    expect(row.secret_hash).toMatch(/^scrypt\$/);
    expect(row.secret_hash).not.toContain(clientSecret);
    expect(JSON.parse(row.group_ids)).toEqual(['ops', 'viewer']);
    await expect(withDb((db) => new Applications({ db }).authenticate(clientId, clientSecret))).resolves.toMatchObject({
      clientId,
      name: 'Partner A',
    });
    await expect(
      withDb((db) => new Applications({ db }).authenticate(clientId, `${clientSecret}x`)),
    ).resolves.toBeUndefined();

    const human = await cli('app', 'create', '--name', 'Partner B', '--group', 'viewer');
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^clientId: +app-\S+\nclientSecret: +\S+\n/);
  });

  it('an unknown group is a usage error (exit 2) naming it', async () => {
    const unknown = await cli('app', 'create', '--name', 'X', '--group', 'ops', '--group', 'admins');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown group "admins"');
  });

  it('numbers beyond what a date can hold are a usage error (exit 2) whose first line names the option and its bound', async () => {
    const created = await cliJson<{ clientId: string }>('app', 'create', '--name', 'Partner C', '--group', 'viewer');
    for (const [args, option] of [
      [['app', 'rotate-secret', created.data.clientId, '--grace', '99999999999999999999'], '--grace'],
      [['station', 'cert', 'CP001', '--csr', temp.configPath, '--days', '100000000'], '--days'],
      [['keys', 'tls-cert', '--days', '100000000'], '--days'],
    ] as const) {
      const refused = await cli(...args);
      expect(refused.code).toBe(2);
      // One line says what is wrong (the usage that follows is the CLI's habit for every usage error).
      const [first] = refused.stderr.split('\n');
      expect(first).toContain(option);
      expect(first).toMatch(/at most \d+$/);
    }
  });

  it('list shows applications without secrets; revoke marks one revoked, once; an unknown client id exits 2', async () => {
    const list = await cliJson<Application[]>('app', 'list');
    expect(list.code).toBe(0);
    expect(list.data.map((a) => a.name)).toEqual(expect.arrayContaining(['Partner A', 'Partner B']));
    expect(JSON.stringify(list.data)).not.toMatch(/secret/i);
    const target = list.data.find((a) => a.name === 'Partner B')!;

    const revoked = await cliJson<Application & { alreadyRevoked: boolean }>('app', 'revoke', target.clientId);
    expect(revoked.code).toBe(0);
    expect(revoked.data).toMatchObject({
      clientId: target.clientId,
      revokedAt: expect.any(String),
      alreadyRevoked: false,
    });
    expect(withDb((db) => new Applications({ db }).revoke(target.clientId)).alreadyRevoked).toBe(true);
    // Not found is exit 1, as for every command (2 is for usage and config mistakes).
    const unknown = await cli('app', 'revoke', 'app-nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no application "app-nope"');
  });
});
