import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCliJson } from '../support/cli.js';
import { startApiDaemon, type ApiDaemon } from './api-harness.js';

describe('POST /oauth2/token', () => {
  let api: ApiDaemon;
  let app: { clientId: string; clientSecret: string };

  const post = (body: string | URLSearchParams, headers: Record<string, string> = {}) =>
    fetch(`${api.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: typeof body === 'string' ? { 'content-type': 'application/x-www-form-urlencoded', ...headers } : headers,
      body,
    });
  const form = (fields: Record<string, string>) => new URLSearchParams(fields);
  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  /** openid-client against our RFC 8414 metadata; http:// is allowed only because the test runs on loopback. */
  const discover = (auth: client.ClientAuth, credentials = app) =>
    client.discovery(new URL(api.baseUrl), credentials.clientId, undefined, auth, {
      algorithm: 'oauth2',
      execute: [client.allowInsecureRequests],
    });

  beforeAll(async () => {
    api = await startApiDaemon();
    app = api.createApp('ops');
  });
  afterAll(() => api.stop());
  // A success clears the loopback address's failure count, so the failures of one test never slow the next.
  afterEach(() => api.token(app));

  async function expectVerifiedToken(accessToken: string, clientId: string) {
    const { payload, protectedHeader } = await jwtVerify(accessToken, createRemoteJWKSet(new URL(api.jwksUrl)), {
      issuer: api.baseUrl,
      audience: api.baseUrl,
      typ: 'at+jwt',
      algorithms: ['RS256'],
    });
    expect(protectedHeader.kid).toMatch(/^token-/);
    expect(payload).toMatchObject({
      sub: clientId,
      client_id: clientId,
      scope: 'charge-points:control charge-points:read',
      groups: ['ops'],
    });
    expect(payload.exp! - payload.iat!).toBe(900);
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
  }

  it('issues an RFC 9068 JWT to openid-client with client_secret_post, verifiable with the published JWKS', async () => {
    const config = await discover(client.ClientSecretPost(app.clientSecret));
    const tokens = await client.clientCredentialsGrant(config);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    await expectVerifiedToken(tokens.access_token, app.clientId);
  });

  it('issues a token to openid-client with client_secret_basic', async () => {
    const config = await discover(client.ClientSecretBasic(app.clientSecret));
    const tokens = await client.clientCredentialsGrant(config);
    await expectVerifiedToken(tokens.access_token, app.clientId);
  });

  it('answers exactly the interface fields with Cache-Control: no-store', async () => {
    const response = await post(
      form({ grant_type: 'client_credentials', client_id: app.clientId, client_secret: app.clientSecret }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 900 });
    expect(decodeProtectedHeader(body.access_token as string)).toMatchObject({ typ: 'at+jwt', alg: 'RS256' });
  });

  it('form-decodes the Basic user and password (RFC 6749 2.3.1)', async () => {
    // Percent-encoding characters that need none must decode to the same credentials.
    const user = app.clientId.replace(/-/g, '%2D');
    const password = app.clientSecret.replace(/[-_]/g, (c) => (c === '-' ? '%2D' : '%5F'));
    const response = await post('grant_type=client_credentials', { authorization: basic(user, password) });
    expect(response.status).toBe(200);
  });

  it('accepts Basic and body credentials together when they agree, refuses them with invalid_request when they differ', async () => {
    const agree = await post(form({ grant_type: 'client_credentials', client_id: app.clientId }), {
      authorization: basic(app.clientId, app.clientSecret),
    });
    expect(agree.status).toBe(200);
    const other = api.createApp('viewer-s1');
    const differ = await post(
      form({ grant_type: 'client_credentials', client_id: other.clientId, client_secret: other.clientSecret }),
      {
        authorization: basic(app.clientId, app.clientSecret),
      },
    );
    expect(differ.status).toBe(400);
    expect(await differ.json()).toMatchObject({ error: 'invalid_request' });
    expect(differ.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses wrong or unknown credentials with 401 invalid_client, challenging Basic only when Basic was used', async () => {
    const wrongBody = await post(
      form({ grant_type: 'client_credentials', client_id: app.clientId, client_secret: 'wrong' }),
    );
    expect(wrongBody.status).toBe(401);
    expect(await wrongBody.json()).toMatchObject({ error: 'invalid_client' });
    expect(wrongBody.headers.get('www-authenticate')).toBeNull();
    expect(wrongBody.headers.get('cache-control')).toBe('no-store');

    const wrongBasic = await post('grant_type=client_credentials', { authorization: basic(app.clientId, 'wrong') });
    expect(wrongBasic.status).toBe(401);
    expect(wrongBasic.headers.get('www-authenticate')).toMatch(/^Basic realm="chargegate"/);

    const unknown = await post(
      form({ grant_type: 'client_credentials', client_id: 'app-unknown', client_secret: app.clientSecret }),
    );
    expect(unknown.status).toBe(401);
    const none = await post(form({ grant_type: 'client_credentials' }));
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: 'invalid_client' });

    // openid-client surfaces the 401 as the Basic challenge it carries.
    const config = await discover(client.ClientSecretBasic('wrong'));
    await expect(client.clientCredentialsGrant(config)).rejects.toMatchObject({
      status: 401,
      cause: [expect.objectContaining({ scheme: 'basic' })],
    });
  });

  it('narrows a token to the scope asked for (openid-client through OpenID discovery); a scope beyond the groups is invalid_scope', async () => {
    // OpenID Connect discovery reads /.well-known/openid-configuration: the same metadata as RFC 8414's.
    const metadata = async (path: string) => (await fetch(`${api.baseUrl}${path}`)).json();
    expect(await metadata('/.well-known/openid-configuration')).toEqual(
      await metadata('/.well-known/oauth-authorization-server'),
    );
    const config = await client.discovery(
      new URL(api.baseUrl),
      app.clientId,
      undefined,
      client.ClientSecretPost(app.clientSecret),
      {
        algorithm: 'oidc',
        execute: [client.allowInsecureRequests],
      },
    );
    const narrow = await client.clientCredentialsGrant(config, { scope: 'charge-points:read' });
    expect(narrow.scope).toBe('charge-points:read');
    expect((await api.call('GET', '/charge-points', { token: narrow.access_token })).status).toBe(200);
    const start = await api.call('POST', '/charge-points/CP001-A/start', {
      token: narrow.access_token,
      body: { connectorId: 1, idTag: 'T' },
    });
    expect(start.status).toBe(403);
    expect(start.body).toMatchObject({ error: 'insufficient_scope' });

    for (const scope of ['events:read', 'charge-points:read events:read', '', 'nonsense']) {
      const response = await post(
        form({ grant_type: 'client_credentials', client_id: app.clientId, client_secret: app.clientSecret, scope }),
      );
      expect(response.status, `scope "${scope}"`).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_scope' });
    }
  });

  it('app rotate-secret: the new secret works at once, the old one until its grace ends, then invalid_client', async () => {
    const partner = api.createApp('viewer-s1');
    const rotate = (...args: string[]) =>
      runCliJson<{ clientId: string; clientSecret: string; previousValidUntil: string | null }>([
        'app',
        'rotate-secret',
        ...args,
        '--config',
        api.temp.configPath,
      ]);
    const asked = Date.now();
    const rotated = await rotate(partner.clientId, '--grace', '300');
    const answered = Date.now();
    expect(rotated.code).toBe(0);
    expect(Object.keys(rotated.data)).toEqual(['clientId', 'clientSecret', 'previousValidUntil']);
    expect(rotated.data.clientSecret).not.toBe(partner.clientSecret);
    const graceEnds = Date.parse(rotated.data.previousValidUntil!);
    expect(graceEnds).toBeGreaterThanOrEqual(asked + 300_000);
    expect(graceEnds).toBeLessThanOrEqual(answered + 300_000);
    const withNew = { clientId: partner.clientId, clientSecret: rotated.data.clientSecret };
    await api.token(withNew);
    await api.token(partner);
    // The grace ends: the daemon compares the stored end with its clock on every request, so moving the end to
    // just past is the grace running out, without waiting for it.
    api.db
      .prepare('UPDATE applications SET previous_secret_expires_at = ? WHERE client_id = ?')
      .run(new Date(Date.now() - 1).toISOString(), partner.clientId);
    const late = await post(
      form({ grant_type: 'client_credentials', client_id: partner.clientId, client_secret: partner.clientSecret }),
    );
    expect(late.status).toBe(401);
    expect(await late.json()).toMatchObject({ error: 'invalid_client' });
    await api.token(withNew);

    // --grace 0: the previous secret stops at once; mistakes are usage errors. Three processes at once: the mistakes
    // change nothing.
    const [immediate, nobody, soon] = await Promise.all([
      rotate(partner.clientId, '--grace', '0'),
      rotate('app-nobody'),
      rotate(partner.clientId, '--grace', 'soon'),
    ]);
    expect(immediate.data.previousValidUntil).toBeNull();
    expect(
      (
        await post(
          form({ grant_type: 'client_credentials', client_id: partner.clientId, client_secret: withNew.clientSecret }),
        )
      ).status,
    ).toBe(401);
    expect(nobody.code).toBe(1);
    // A bad option value is commander's usage error; with --json it is still one JSON document.
    expect(soon).toMatchObject({
      code: 2,
      data: {
        error:
          "option '--grace <seconds>' argument 'soon' is invalid. expected a whole number of at least 0 and at most 31536000",
      },
    });
  });

  it('refuses other grant types with unsupported_grant_type and malformed requests with invalid_request', async () => {
    const password = await post(
      form({ grant_type: 'password', client_id: app.clientId, client_secret: app.clientSecret }),
    );
    expect(password.status).toBe(400);
    expect(await password.json()).toMatchObject({ error: 'unsupported_grant_type' });

    const cases: Array<[string, RequestInit]> = [
      ['no grant_type', { body: form({ client_id: app.clientId, client_secret: app.clientSecret }) }],
      ['repeated parameter', { body: 'grant_type=client_credentials&grant_type=client_credentials' }],
      [
        'JSON body',
        { body: JSON.stringify({ grant_type: 'client_credentials' }), headers: { 'content-type': 'application/json' } },
      ],
      ['no body', {}],
      ['body over the limit', { body: `grant_type=client_credentials&padding=${'a'.repeat(70_000)}` }],
    ];
    for (const [what, init] of cases) {
      const headers =
        init.headers ??
        (typeof init.body === 'string' ? { 'content-type': 'application/x-www-form-urlencoded' } : undefined);
      const response = await fetch(`${api.baseUrl}/oauth2/token`, {
        method: 'POST',
        ...init,
        ...(headers && { headers }),
      });
      expect(response.status, what).toBe(400);
      expect(await response.json(), what).toMatchObject({
        error: 'invalid_request',
        error_description: expect.any(String),
      });
      expect(response.headers.get('cache-control'), what).toBe('no-store');
    }
  });

  it('refuses a revoked application', async () => {
    const doomed = api.createApp('ops');
    await api.token(doomed);
    api.db
      .prepare('UPDATE applications SET revoked_at = ? WHERE client_id = ?')
      .run(new Date().toISOString(), doomed.clientId);
    const response = await post(
      form({ grant_type: 'client_credentials', client_id: doomed.clientId, client_secret: doomed.clientSecret }),
    );
    expect(response.status).toBe(401);
  });

  it('refuses an address at once (429, Retry-After) after 10 failed client authentications in a minute, and logs each refusal', async () => {
    // From another loopback address, so the other tests' client on 127.0.0.1 is not refused afterwards.
    const elsewhere = new Agent({ localAddress: '127.0.0.3' });
    const wrong = form({
      grant_type: 'client_credentials',
      client_id: app.clientId,
      client_secret: 'guess',
    }).toString();
    const attempt = () =>
      request(`${api.baseUrl}/oauth2/token`, {
        method: 'POST',
        dispatcher: elsewhere,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: wrong,
      });
    for (let i = 0; i < 10; i += 1) {
      const response = await attempt();
      await response.body.dump();
      expect(response.statusCode).toBe(401);
    }
    const refused = await attempt();
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(50);
    expect(await refused.body.json()).toMatchObject({ error: 'slow_down' });
    await elsewhere.close();
    expect(api.logged('token request refused').length).toBeGreaterThanOrEqual(11);
    const metrics = await (await fetch(`${api.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^chargegate_token_requests_total\{outcome="invalid_client"\} (\d\d)$/m);
    expect(metrics).toMatch(/^chargegate_token_requests_total\{outcome="slow_down"\} 1$/m);
    expect(metrics).toMatch(/^chargegate_token_requests_total\{outcome="issued"\} \d+$/m);
  });
});
