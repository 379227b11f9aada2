import { setTimeout as delay } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config/index.js';
import { Site } from '../../src/site/index.js';
import { apiDaemonForTest } from '../http/api-harness.js';
import { daemonForTest, siteWith } from '../support/daemon.js';

/** The flood comes from another loopback address, so per-address throttling can be told apart from the good station. */
const ATTACKER = '127.0.0.2';
const FLOOD = 60;

function upgradeStatus(url: string, password: string): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, 'ocpp1.6', {
      localAddress: ATTACKER,
      headers: { authorization: `Basic ${Buffer.from(`CP001:${password}`).toString('base64')}` },
    });
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('open', () => (ws.close(), resolve(101)));
    ws.once('error', () => resolve(0));
  });
}

/** Contract section 7: secrets checked off the event loop, failures throttled per remote address. */
describe('a wrong-password flood from one address', () => {
  it('on the OCPP upgrade: after 10 failures a minute the address gets 429 at once, while a good station on another address connects', async () => {
    const daemon = await daemonForTest({ ...siteWith(), ocpp: { host: '127.0.0.1', port: 0, securityProfile: 1 } });
    const password = new Site({ db: daemon.db, config: () => loadConfig(daemon.temp.configPath) }).stations.pair(
      'CP001',
      's1',
    ).password;

    const statuses = await Promise.all(
      Array.from({ length: FLOOD }, (_, i) =>
        delay(i * 5).then(() => upgradeStatus(`${daemon.url}/CP001`, `wrong-${i}`)),
      ),
    );
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(FLOOD - 10);
    // The right password from the throttled address is refused too until the minute passes: no hashing for it.
    expect(await upgradeStatus(`${daemon.url}/CP001`, password)).toBe(429);
    expect(
      daemon.logged(
        'station connection refused: too many failed attempts from this address; refusing it for a minute without checking',
      ),
    ).toEqual([expect.objectContaining({ remoteAddress: ATTACKER })]);

    // The good station on 127.0.0.1 is not affected.
    const station = await daemon.connect('CP001', password);
    expect(await station.boot()).toMatchObject({ status: 'Accepted' });
  });

  it('on the token endpoint: after 10 failures a minute the address gets 429 at once; /health and other addresses are served', async () => {
    const api = await apiDaemonForTest();
    const app = api.createApp('ops');
    const attacker = new Agent({ localAddress: ATTACKER });
    const attempt = (secret: string) =>
      request(`${api.baseUrl}/oauth2/token`, {
        method: 'POST',
        dispatcher: attacker,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: app.clientId,
          client_secret: secret,
        }).toString(),
      }).then(async (r) => (await r.body.dump(), r.statusCode));
    const statuses = await Promise.all(Array.from({ length: FLOOD }, (_, i) => attempt(`wrong-${i}`)));
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(FLOOD - 10);
    expect(await attempt(app.clientSecret)).toBe(429);
    const limited = await request(`${api.baseUrl}/oauth2/token`, {
      method: 'POST',
      dispatcher: attacker,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=x&client_secret=y',
    });
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(await limited.body.json()).toMatchObject({ error: 'slow_down' });

    expect((await fetch(`${api.baseUrl}/health`)).status).toBe(200);
    expect(await api.token(app)).toMatch(/^ey/);
    await attacker.close();
  });
});
