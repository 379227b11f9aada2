import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configWarnings } from '../../src/cli/commands/check-config.js';
import { ConfigError, loadConfig, parseConfig } from '../../src/config/index.js';
import { ROOT, runCli, runCliJson } from '../support/cli.js';
import { tempSite } from '../support/temp-site.js';

describe('config', () => {
  it('accepts the embedded default config', () => {
    const config = loadConfig(`${ROOT}/config/default.yaml`);
    expect(config.sites[0]?.stations[0]?.id).toBe('CP001');
    expect(config.http.host).toBe('127.0.0.1');
    expect(config.webhookDelivery).toEqual({
      retryIntervalS: 10,
      maxRetries: 360,
      queueCapacity: 1000,
      requestTimeoutMs: 10000,
      retainDeliveredDays: 30,
      signedMeterValues: 'beginEnd',
    });
  });

  it('names the key path of every problem', () => {
    const text = 'sites:\n  - id: a\n    stations:\n      - id: X\n      - {}\nhttp: { port: "x" }\n';
    let problems: string[] = [];
    try {
      parseConfig(text, 'f.yaml');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain('f.yaml: sites[0].stations[1].id: required');
      problems = (err as ConfigError).problems;
    }
    expect(problems).toEqual(
      expect.arrayContaining([
        'sites[0].stations[1].id: required',
        expect.stringMatching(/^http\.port: expected number/),
      ]),
    );
  });

  it('refuses a webhook URL that is not http(s)', () => {
    const text = 'sites:\n  - id: a\n    webhooks:\n      - { id: w, url: "ftp://x/y" }\n';
    expect(() => parseConfig(text)).toThrow(/sites\[0\]\.webhooks\[0\]\.url/);
  });

  it('refuses duplicate station ids and unknown keys', () => {
    const text = 'sites:\n  - id: a\n    stations: [{ id: X }]\n  - id: b\n    stations: [{ id: X }]\nbogus: 1\n';
    let problems: string[] = [];
    try {
      parseConfig(text);
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems).toEqual(
      expect.arrayContaining(['(top level): unknown key "bogus"', 'sites[1].stations[0].id: duplicate station id "X"']),
    );
  });

  it("refuses values out of the contract's bounds and durations no timer can hold, naming each key path", () => {
    const text = [
      'sites: [{ id: a }]',
      'webhookDelivery: { requestTimeoutMs: 99999999999, retryIntervalS: 2500000, maxRetries: 100001, queueCapacity: 1000001, retainDeliveredDays: 0 }',
      'ocpp: { callTimeoutMs: 3000000000, heartbeatIntervalS: 0 }',
      'authorization: { pluginTimeoutMs: 2147483648 }',
    ].join('\n');
    let problems: string[] = [];
    try {
      parseConfig(text);
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    const keys = problems.map((p) => p.split(':')[0]).sort();
    expect(keys).toEqual([
      'authorization.pluginTimeoutMs',
      'ocpp.callTimeoutMs',
      'ocpp.heartbeatIntervalS',
      'webhookDelivery.maxRetries',
      'webhookDelivery.queueCapacity',
      'webhookDelivery.requestTimeoutMs',
      'webhookDelivery.retainDeliveredDays',
      'webhookDelivery.retryIntervalS',
    ]);
    expect(problems).toContain('webhookDelivery.requestTimeoutMs: at most 300000');
    expect(() =>
      parseConfig(
        'sites: [{ id: a }]\nwebhookDelivery: { requestTimeoutMs: 300000, retryIntervalS: 86400, maxRetries: 100000, queueCapacity: 1000000 }',
      ),
    ).not.toThrow();
  });

  it('check-config exits 2 naming the file and key path, 0 when good', async () => {
    const bad = await runCli(['check-config', '--config', `${ROOT}/test/config/fixtures/missing-station-id.yaml`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('missing-station-id.yaml: sites[0].stations[0].id: required');
    const good = await runCli(['check-config', '--config', `${ROOT}/config/default.yaml`]);
    expect(good.code).toBe(0);
  });

  it('check-config refuses an Ed25519 documented profile (RSA-PSS-SHA256 only), exit 2 with the key path', async () => {
    const bad = await runCli(['check-config', '--config', `${ROOT}/test/config/fixtures/documented-ed25519.yaml`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'documented-ed25519.yaml: sites[0].webhooks[0].signature.alg: the documented profile is rsa-pss-sha256 only',
    );
  });

  it('check-config names a mistyped signature.alg by its own key path and says what it may be, exit 2', async () => {
    const bad = await runCli(['check-config', '--config', `${ROOT}/test/config/fixtures/signature-alg-typo.yaml`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'signature-alg-typo.yaml: sites[0].webhooks[0].signature.alg: "ed25518" is none of ed25519, rsa-pss-sha512 (profile rfc9421), rsa-pss-sha256 (profile documented)',
    );
  });

  it('check-config --json lists every problem; exit 2', async () => {
    const bad = await runCliJson<{ ok: boolean; file: string; problems: string[] }>([
      'check-config',
      '--config',
      `${ROOT}/test/config/fixtures/missing-station-id.yaml`,
    ]);
    expect(bad.code).toBe(2);
    expect(bad.data).toEqual({
      ok: false,
      file: `${ROOT}/test/config/fixtures/missing-station-id.yaml`,
      problems: ['sites[0].stations[0].id: required'],
    });
  });

  it('check-config warns, exit 0, about an issuer on a wildcard address and an unencrypted keystore on a LAN listener', async () => {
    const site = tempSite({ http: { host: '0.0.0.0', port: 8080 } });
    try {
      const plain = await runCliJson<{ ok: boolean; warnings: string[] }>(
        ['check-config', '--config', site.configPath],
        { env: { CHARGEGATE_KEYSTORE_PASSPHRASE: '' } },
      );
      expect(plain.code).toBe(0);
      expect(plain.data.warnings).toEqual([
        expect.stringMatching(/^http\.issuer: http:\/\/0\.0\.0\.0:8080 names every interface/),
        expect.stringMatching(
          /^keystore: the signing keys are stored unencrypted while http\.host is 0\.0\.0\.0; give a passphrase in \$CHARGEGATE_KEYSTORE_PASSPHRASE/,
        ),
      ]);
      const human = await runCli(['check-config', '--config', site.configPath], {
        env: { CHARGEGATE_KEYSTORE_PASSPHRASE: 'correct horse' },
      });
      expect(human.code).toBe(0);
      expect(human.stdout.trim().split('\n')).toEqual([
        `${site.configPath}: ok (1 site)`,
        expect.stringMatching(/^warning: http\.issuer: /),
      ]);
      // A keystore that cannot be read is told as a warning naming the file, not a crash.
      mkdirSync(site.dataDir, { recursive: true });
      writeFileSync(path.join(site.dataDir, 'keystore.json'), 'not json');
      // The other configs' warnings from the function check-config prints (the two runs above show how).
      expect(configWarnings(loadConfig(site.configPath), {})).toContainEqual(
        expect.stringMatching(/^keystore: .*keystore\.json: not a chargegate keystore/),
      );
      rmSync(path.join(site.dataDir, 'keystore.json'));
      site.write({ http: { host: '0.0.0.0', port: 8080, issuer: 'http://gateway.local:8080' } });
      expect(configWarnings(loadConfig(site.configPath), { CHARGEGATE_KEYSTORE_PASSPHRASE: 's' })).toEqual([]);
    } finally {
      site.cleanup();
    }
  });

  it('check-config warns when stations could fetch firmware and upload logs only on loopback, until firmware.baseUrl', async () => {
    const site = tempSite({ http: { host: '127.0.0.1', port: 8080 } });
    try {
      const loopback = await runCliJson<{ warnings: string[] }>(['check-config', '--config', site.configPath]);
      expect(loopback.code).toBe(0);
      expect(loopback.data.warnings).toEqual([
        "firmware.baseUrl: stations would fetch firmware and upload logs at http://127.0.0.1:8080 (http.issuer), which no station can reach; set firmware.baseUrl to the address stations reach this gateway's HTTP listener under",
      ]);
      site.write({ http: { host: '127.0.0.1', port: 8080 }, firmware: { baseUrl: 'http://192.0.2.10:8080/' } });
      expect(configWarnings(loadConfig(site.configPath))).toEqual([]);
      site.write({ firmware: { baseUrl: 'ftp://192.0.2.10/' }, logs: { maxUploadBytes: 2e9, maxTotalBytes: 1e9 } });
      const bad = await runCliJson<{ problems: string[] }>(['check-config', '--config', site.configPath]);
      expect(bad.code).toBe(2);
      expect(bad.data.problems).toEqual([
        expect.stringMatching(/^firmware\.baseUrl: /),
        'logs.maxUploadBytes: at most logs.maxTotalBytes',
      ]);
    } finally {
      site.cleanup();
    }
  });
});
