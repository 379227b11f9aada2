import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { Site } from '../../src/site/index.js';
import { DATABASE_FILE, KEYSTORE_FILE, openDatabase } from '../../src/store/index.js';
import { runCli, runCliJson } from '../support/cli.js';
import { daemonForTest } from '../support/daemon.js';
import { tempSiteForTest } from '../support/for-test.js';
import {
  databaseOfSchema,
  LATEST_SCHEMA,
  PREVIOUS_SCHEMA,
  schemaOf,
  transactionsOf,
} from '../support/previous-release.js';

const [previous, latest] = [PREVIOUS_SCHEMA, LATEST_SCHEMA];

describe('chargegate rollback', { timeout: 120_000 }, () => {
  it('says what it would restore and what is lost, changes nothing without --yes, and restores with it', async () => {
    const temp = tempSiteForTest();
    const config = loadConfig(temp.configPath);
    const file = path.join(temp.dataDir, DATABASE_FILE);
    // The previous release left one transaction open and its StartTransaction event.
    const old = databaseOfSchema(file, previous);
    old
      .prepare(
        "INSERT INTO transactions (site_id, station_id, charge_point_id, connector_id, id_tag, meter_start_wh, started_at, source) VALUES ('s1', 'CP001', 'CP001-A', 1, 'TAG-0', 1000, '2026-11-26T09:00:00.000Z', 'ocpp')",
      )
      .run();
    old
      .prepare(
        "INSERT INTO events (event_id, event_type, site_id, payload, created_at) VALUES ('e0', 'StartTransaction', 's1', '{}', '2026-11-26T09:00:00.000Z')",
      )
      .run();
    old.close();

    // The upgrade (this open copies, then migrates); since then the open one stopped and two more started.
    const db = openDatabase(temp.dataDir);
    const site = new Site({ db, config: () => config });
    site.transactions.stop({ stationId: 'CP001', transactionId: 1, meterStopWh: 2000, stoppedAt: new Date() });
    for (const [connectorId, idTag] of [
      [1, 'TAG-1'],
      [2, 'TAG-2'],
    ] as const) {
      site.transactions.start({
        at: site.connectors.locate('CP001', connectorId),
        idTag,
        meterStartWh: 0,
        startedAt: new Date(),
        source: 'ocpp',
      });
    }
    db.close();

    const told = await runCliJson<{ restored: boolean; currentSchemaVersion: number; lost: object }>([
      'rollback',
      '--config',
      temp.configPath,
    ]);
    expect(told.code).toBe(0);
    expect(told.data).toMatchObject({
      restored: false,
      currentSchemaVersion: latest,
      backup: { schemaVersion: previous },
      lost: { events: 3, transactionsStarted: 2, transactionsStopped: 1 },
    });
    expect(schemaOf(file)).toBe(latest);

    const human = await runCli(['rollback', '--yes', '--config', temp.configPath]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`Restored schema ${previous}`);
    expect(human.stdout).toContain('lost: 3 events, 2 transactions started and 1 stopped since the upgrade');
    expect(schemaOf(file)).toBe(previous);
    expect(transactionsOf(file)).toEqual([{ id: 1, stopped: 0 }]);
    // The database it replaced is kept whole: its WAL's commits included.
    const [kept] = readdirSync(temp.dataDir).filter((f) => f.startsWith(`${DATABASE_FILE}.rolled-back-`));
    expect(schemaOf(path.join(temp.dataDir, kept!))).toBe(latest);
    expect(transactionsOf(path.join(temp.dataDir, kept!))).toEqual([
      { id: 1, stopped: 1 },
      { id: 2, stopped: 0 },
      { id: 3, stopped: 0 },
    ]);
  });

  it('restores the keystore the previous release had: keys an upgrade added go with the rollback, kept beside', async () => {
    const temp = tempSiteForTest();
    const file = path.join(temp.dataDir, DATABASE_FILE);
    databaseOfSchema(file, previous).close();
    const keystore = path.join(temp.dataDir, KEYSTORE_FILE);
    // What the previous release wrote (its content is not read here), private: 0600.
    const before = '{"format":"chargegate-keystore/1","keys":[]}\n';
    writeFileSync(keystore, before, { mode: 0o600 });

    // The upgrade copies both before it migrates; then the new release adds keys the previous one cannot read.
    openDatabase(temp.dataDir).close();
    expect(readFileSync(path.join(temp.dataDir, `${KEYSTORE_FILE}.schema-${previous}.backup`), 'utf8')).toBe(before);
    const after = '{"format":"chargegate-keystore/1","keys":[{"purpose":"webhook-ed25519"}]}\n';
    writeFileSync(keystore, after);

    const human = await runCli(['rollback', '--yes', '--config', temp.configPath]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('the keystore as it was before the upgrade is back');
    expect(readFileSync(keystore, 'utf8')).toBe(before);
    expect(statSync(keystore).mode & 0o777).toBe(0o600);
    const [kept] = readdirSync(temp.dataDir).filter((f) => f.startsWith(`${KEYSTORE_FILE}.rolled-back-`));
    expect(readFileSync(path.join(temp.dataDir, kept!), 'utf8')).toBe(after);
  });

  it('with no copy from before an upgrade says so and exits 1', async () => {
    const temp = tempSiteForTest();
    openDatabase(temp.dataDir).close();
    const refused = await runCli(['rollback', '--config', temp.configPath]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(/no copy from before an upgrade in /)]);
  });

  it('restores nothing while the daemon runs: one line says the data dir is in use', async () => {
    const t = await daemonForTest();
    databaseOfSchema(path.join(t.temp.dataDir, `${DATABASE_FILE}.schema-${previous}.backup`), previous).close();
    const refused = await runCli(['rollback', '--yes', '--config', t.temp.configPath]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringMatching(/is in use by another chargegate/)]);
    expect(schemaOf(path.join(t.temp.dataDir, DATABASE_FILE))).toBe(latest);
    expect(readdirSync(t.temp.dataDir).filter((f) => f.includes('rolled-back'))).toEqual([]);
  });
});
