import { generateKeyPairSync } from 'node:crypto';
import { base64url, decodeJwt, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keystore } from '../../src/keystore/index.js';
import { runCli } from '../support/cli.js';
import { startApiDaemon, type ApiDaemon } from './api-harness.js';

describe('bearer tokens on the API', () => {
  let api: ApiDaemon;
  let keystore: Keystore;
  let ops: { clientId: string; clientSecret: string };
  let valid: string;

  beforeAll(async () => {
    api = await startApiDaemon();
    keystore = await Keystore.open({ dataDir: api.temp.dataDir, retiredKeyGraceS: 86_400 });
    ops = api.createApp('ops');
    valid = await api.token(ops);
  });
  afterAll(() => api.stop());

  /** A token with the real claims of `ops`, changed as a forger would, signed as told. */
  async function forge(
    options: {
      claims?: Record<string, unknown>;
      header?: Record<string, unknown>;
      key?: Parameters<SignJWT['sign']>[0];
    } = {},
  ): Promise<string> {
    const signing = keystore.accessTokenSigningKey();
    const claims = { ...decodeJwt(valid), ...options.claims };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: signing.kid, ...options.header })
      .sign(options.key ?? signing.privateKey);
  }

  async function expect401(token: string | undefined, reason: RegExp, headers: Record<string, string> = {}) {
    const response = await api.call('GET', '/charge-points', { ...(token !== undefined && { token }), headers });
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ error: expect.any(String), message: expect.stringMatching(reason) });
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="chargegate"/);
    return response;
  }

  it('accepts the token it issued', async () => {
    const response = await api.call('GET', '/charge-points', { token: valid });
    expect(response.status).toBe(200);
  });

  it('401 without a bearer token, with a bare challenge', async () => {
    const missing = await expect401(undefined, /missing bearer token/);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="chargegate"');
    await expect401(undefined, /missing bearer token/, {
      authorization: `Basic ${Buffer.from(`${ops.clientId}:${ops.clientSecret}`).toString('base64')}`,
    });
  });

  it('401 invalid_token for a malformed token', async () => {
    for (const token of ['not-a-jwt', 'a.b.c', `${valid}x!`]) {
      const response = await expect401(token, /malformed|invalid/);
      expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    }
  });

  it('401 for an expired token signed with the real key', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expect401(await forge({ claims: { iat: now - 1000, exp: now - 100 } }), /expired/);
  });

  it('401 for a tampered payload (wrong signature)', async () => {
    const [header, , signature] = valid.split('.');
    const payload = base64url.encode(JSON.stringify({ ...decodeJwt(valid), groups: ['ops', 'admin'] }));
    await expect401(`${header}.${payload}.${signature}`, /signature invalid/);
  });

  it('401 for alg none', async () => {
    await expect401(new UnsecuredJWT(decodeJwt(valid)).setIssuer(api.baseUrl).encode(), /algorithm|malformed/);
  });

  it('401 for a token signed with another key, whatever kid it claims', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    await expect401(await forge({ key: privateKey }), /signature invalid/);
    await expect401(
      await forge({ key: privateKey, header: { kid: 'token-made-up' } }),
      /not signed by a published access-token key/,
    );
  });

  it('401 for a token signed with the webhook key (published, but not for tokens)', async () => {
    const webhook = keystore.webhookSigningKey();
    await expect401(
      await forge({ key: webhook.privateKey, header: { alg: 'PS256', kid: 'sign' } }),
      /algorithm not allowed|not signed by a published/,
    );
  });

  it('401 for HS256 keyed with the public key (algorithm confusion)', async () => {
    const publicJwk = keystore.jwks('token').keys[0]!;
    await expect401(
      await forge({ key: new TextEncoder().encode(JSON.stringify(publicJwk)), header: { alg: 'HS256' } }),
      /algorithm not allowed/,
    );
  });

  it('401 for another issuer, another audience, or not an access token', async () => {
    await expect401(await forge({ claims: { iss: 'https://idp.example' } }), /claim "iss"/);
    await expect401(await forge({ claims: { aud: 'https://other-api.example' } }), /claim "aud"/);
    await expect401(await forge({ header: { typ: 'JWT' } }), /claim "typ"|malformed/);
  });

  it('401 at once after `app revoke` in another process', { timeout: 90_000 }, async () => {
    const doomed = api.createApp('ops');
    const token = await api.token(doomed);
    expect((await api.call('GET', '/charge-points', { token })).status).toBe(200);
    const revoke = await runCli(['app', 'revoke', doomed.clientId, '--config', api.temp.configPath]);
    expect(revoke.code).toBe(0);
    const response = await expect401(token, /revoked/);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('403 insufficient_scope when the groups lack the permission', async () => {
    const viewer = await api.token(api.createApp('viewer-s1'));
    const response = await api.call('POST', '/charge-points/CP001-A/start', {
      token: viewer,
      body: { connectorId: 1, idTag: 'TAG' },
    });
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ error: 'insufficient_scope' });
    expect(response.headers.get('www-authenticate')).toBe(
      'Bearer realm="chargegate", error="insufficient_scope", error_description="requires charge-points:control", scope="charge-points:control"',
    );
  });

  it('403 for a charge point outside the groups, 404 for one that does not exist', async () => {
    const stationApp = await api.token(api.createApp('station-cp002'));
    const outside = await api.call('POST', '/charge-points/CP001-A/start', {
      token: stationApp,
      body: { connectorId: 1, idTag: 'TAG' },
    });
    expect(outside.status).toBe(403);
    expect(outside.body).toMatchObject({ error: 'forbidden' });
    const missing = await api.call('POST', '/charge-points/NOPE/start', {
      token: stationApp,
      body: { connectorId: 1, idTag: 'TAG' },
    });
    expect(missing.status).toBe(404);
  });

  it('lists exactly the charge points each scope level reaches, inherited downward', async () => {
    const list = async (...groups: string[]) => {
      const response = await api.call('GET', '/charge-points', { token: await api.token(api.createApp(...groups)) });
      expect(response.status).toBe(200);
      return (response.body as unknown as Array<{ chargePointId: string }>).map((cp) => cp.chargePointId);
    };
    expect(await list('ops')).toEqual(['CP001-A', 'CP001-B', 'CP002-A']);
    expect(await list('viewer-s1')).toEqual(['CP001-A', 'CP001-B']);
    expect(await list('station-cp002')).toEqual(['CP002-A']);
    expect(await list('only-cp001-b')).toEqual(['CP001-B']);
    expect(await list('station-cp002', 'only-cp001-b')).toEqual(['CP001-B', 'CP002-A']);
  });
});
