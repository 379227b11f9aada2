import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, fetch } from 'undici';
import { describe, expect, it } from 'vitest';
import { Applications } from '../../src/applications/index.js';
import { loadConfig } from '../../src/config/index.js';
import { createGatewayCertificate } from '../../src/keystore/index.js';
import { runCli } from '../support/cli.js';
import { daemonForTest } from '../support/daemon.js';
import { tempDirForTest } from '../support/for-test.js';
import { freePort } from '../support/free-port.js';

const GROUPS = [
  { id: 'monitoring', scope: 'company:acme', permissions: ['status:read'] },
  { id: 'viewer', scope: 'company:acme', permissions: ['charge-points:read'] },
];

describe('HTTP over TLS; status behind status:read on a LAN listener (contract section 8)', () => {
  it('serves HTTPS; /, status.json and /metrics need a status:read token on a non-loopback listener, /health does not; publicStatus opens them', async () => {
    const { certificate, privateKey } = await createGatewayCertificate({
      names: ['localhost', '127.0.0.1'],
      validDays: 1,
    });
    const port = await freePort();
    const http = { host: '0.0.0.0', port, issuer: `https://127.0.0.1:${port}` };
    const dir = tempDirForTest('tls');
    const cert = path.join(dir, 'http.crt');
    const key = path.join(dir, 'http.key');
    writeFileSync(cert, certificate);
    writeFileSync(key, privateKey);
    const t = await daemonForTest({ http: { ...http, tls: { cert, key } }, groups: GROUPS });

    const dispatcher = new Agent({ connect: { ca: certificate } });
    const base = `https://127.0.0.1:${port}`;
    const get = (route: string, token?: string) =>
      fetch(`${base}${route}`, { dispatcher, headers: token ? { authorization: `Bearer ${token}` } : {} });
    const tokenFor = async (groupId: string): Promise<string> => {
      const app = new Applications({ db: t.db }).create(loadConfig(t.temp.configPath), {
        name: groupId,
        groupIds: [groupId],
      });
      const response = await fetch(`${base}/oauth2/token`, {
        dispatcher,
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: app.clientId,
          client_secret: app.clientSecret,
        }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { access_token: string }).access_token;
    };

    for (const route of ['/', '/status.json', '/metrics']) {
      const response = await get(route);
      expect({ route, status: response.status }).toEqual({ route, status: 401 });
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="chargegate"/);
    }
    expect((await get('/health')).status).toBe(200);
    expect((await get('/status.css')).status).toBe(200);

    const monitoring = await tokenFor('monitoring');
    for (const route of ['/', '/status.json', '/metrics'])
      expect({ route, status: (await get(route, monitoring)).status }).toEqual({ route, status: 200 });
    const viewer = await tokenFor('viewer');
    const refused = await get('/status.json', viewer);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'insufficient_scope' });

    t.temp.write({ log: { level: 'info' }, http: { ...http, tls: { cert, key }, publicStatus: true }, groups: GROUPS });
    expect(await t.daemon.reload()).toBe(true);
    expect((await get('/status.json')).status).toBe(200);
    await dispatcher.close();
  });

  it('check-config names an unreadable TLS file (exit 2); a daemon on loopback needs no token', async () => {
    const t = await daemonForTest({});
    const response = await fetch(`http://127.0.0.1:${t.daemon.httpPort}/status.json`);
    expect(response.status).toBe(200);
    t.temp.write({
      http: { host: '127.0.0.1', port: 0, tls: { cert: '/nonexistent/http.crt', key: '/nonexistent/http.key' } },
    });
    const checked = await runCli(['check-config', '--config', t.temp.configPath]);
    expect(checked.code).toBe(2);
    expect(checked.stderr).toContain('http.tls.cert: cannot read /nonexistent/http.crt: ENOENT');
  });
});
