import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyInfo, PublicJwk } from '../../src/keystore/index.js';
import { startApiDaemon, type ApiDaemon } from '../http/api-harness.js';
import { eventually } from '../support/daemon.js';
import { runCliJson } from '../support/cli.js';
import { startReceiver, type Receiver, type ReceivedRequest } from '../support/receiver.js';
import type { SimulatedStation } from '../support/station.js';
import { JwksWebhookVerifier, kidCachingRfc9421Verifier } from '../support/webhook-verifier.js';

/**
 * The lead holds the CLI's exit and the checks during it (a webhook to three receivers, a token: about 2 s on a loaded
 * machine), which end by asserting they ran before the switch; every second more is waited for nothing.
 */
const LEAD_S = 5;
/** The grace holds the checks after the switch that need the old key still published (about 2 s loaded). */
const GRACE_S = 4;

/**
 * `chargegate keys rotate` in its own process while the daemon signs webhooks and issues tokens: a partner whose
 * verifier re-fetches the JWKS on a failure accepts everything signed before, during and after the rotation.
 */
describe('key rotation end to end', { timeout: 120_000 }, () => {
  let api: ApiDaemon;
  let receiver: Receiver;
  /** Gets the same events signed with the rfc9421 profile, whose keyid is the key's own stable kid. */
  let kidReceiver: Receiver;
  /** And signed with rfc9421's ed25519: the Ed25519 key's own kid, an OKP key in the JWKS. */
  let edReceiver: Receiver;
  let station: SimulatedStation;
  let app: { clientId: string; clientSecret: string };
  let statusFlip = 0;

  beforeAll(async () => {
    receiver = await startReceiver();
    kidReceiver = await startReceiver();
    edReceiver = await startReceiver();
    api = await startApiDaemon({
      keystore: { nextKeyLeadS: LEAD_S, retiredKeyGraceS: GRACE_S },
      sites: [
        {
          id: 's1',
          stations: [{ id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1] }] }],
          meters: [],
          webhooks: [
            { id: 'partner', url: receiver.url(), events: ['ChargePointStatus'] },
            { id: 'partner-9421', url: kidReceiver.url(), events: ['ChargePointStatus'], signature: 'rfc9421' },
            {
              id: 'partner-ed25519',
              url: edReceiver.url(),
              events: ['ChargePointStatus'],
              signature: { profile: 'rfc9421', alg: 'ed25519' },
            },
          ],
        },
      ],
      groups: [{ id: 'ops', scope: 'company:acme', permissions: ['charge-points:read'] }],
    });
    station = await api.connect('CP001');
    await station.boot();
    app = api.createApp('ops');
  });
  afterAll(async () => {
    await api.stop();
    await receiver.close();
    await kidReceiver.close();
    await edReceiver.close();
  });

  /**
   * A real webhook: the station changes status and the daemon delivers the signed ChargePointStatus (both profiles,
   * and rfc9421 with ed25519).
   */
  async function webhook(): Promise<ReceivedRequest> {
    const before = receiver.requests.length;
    statusFlip += 1;
    await station.statusNotification({ connectorId: 1, status: statusFlip % 2 === 1 ? 'Preparing' : 'Available' });
    await receiver.waitForCount(before + 1);
    await kidReceiver.waitForCount(before + 1);
    await edReceiver.waitForCount(before + 1);
    return receiver.requests[before]!;
  }
  const rfc9421Twin = (request: ReceivedRequest) => kidReceiver.requests[request.index]!;
  const ed25519Twin = (request: ReceivedRequest) => edReceiver.requests[request.index]!;

  const jwks = async () => ((await (await fetch(api.jwksUrl)).json()) as { keys: PublicJwk[] }).keys;
  const signKey = async () => (await jwks()).find((k) => k.kid === 'sign')!;

  it('webhooks and tokens from before, during and after `keys rotate` all verify; the old webhook key leaves the JWKS after its grace', async () => {
    // A partner that fetched the JWKS before the rotation and keeps it until a verification fails.
    const partner = new JwksWebhookVerifier(api.jwksUrl);
    // jose re-fetches the JWKS when a token names a kid it has not seen; no cooldown, as a re-fetch on failure.
    const tokenKeys = createRemoteJWKSet(new URL(api.jwksUrl), { cooldownDuration: 0 });
    const verifyToken = (token: string) =>
      jwtVerify(token, tokenKeys, { issuer: api.baseUrl, audience: api.baseUrl, typ: 'at+jwt' });

    // And one that verifies rfc9421 by keyid through jose's kid cache. jose fetches again on an unknown kid at most
    // every cooldownDuration (30 s by default, well inside the default 600 s lead); this test's lead is LEAD_S.
    const kidPartner = kidCachingRfc9421Verifier(api.jwksUrl, { cooldownDuration: 1000 });

    const oldSign = await signKey();
    const oldWebhookId = (await jwks()).find((k) => k.n === oldSign.n && k.kid !== 'sign')!.kid;
    const oldEd25519 = (await jwks()).find((k) => k.kty === 'OKP')!;
    expect(oldEd25519).toMatchObject({ crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    const webhookBefore = await webhook();
    expect(await partner.verify(webhookBefore)).toBe('sign');
    expect(await kidPartner(rfc9421Twin(webhookBefore))).toBe(oldWebhookId);
    // The same off-the-shelf verifier (http-message-signatures + jose) verifies ed25519 by the Ed25519 key's kid.
    expect(await kidPartner(ed25519Twin(webhookBefore))).toBe(oldEd25519.kid);
    const tokenBefore = await api.token(app);
    await verifyToken(tokenBefore);

    const rotation = await runCliJson<{ activatesAt: string; keys: KeyInfo[] }>([
      'keys',
      'rotate',
      '--config',
      api.temp.configPath,
    ]);
    expect(rotation.code).toBe(0);
    const [nextWebhook, nextToken, nextEd25519] = rotation.data.keys;
    expect(nextWebhook).toMatchObject({ purpose: 'webhook', state: 'next', jwksKid: nextWebhook!.id });
    expect(nextToken).toMatchObject({ purpose: 'token', state: 'next' });
    expect(nextEd25519).toMatchObject({
      purpose: 'webhook-ed25519',
      alg: 'EdDSA',
      state: 'next',
      jwksKid: nextEd25519!.id,
    });

    // During the lead: the next keys are published, the old ones still sign.
    const during = await jwks();
    expect(during.map((k) => k.kid)).toEqual(
      expect.arrayContaining(['sign', nextWebhook!.id, nextToken!.id, nextEd25519!.id, oldEd25519.kid]),
    );
    expect(during.find((k) => k.kid === 'sign')!.n).toBe(oldSign.n);
    const webhookDuring = await webhook();
    expect(await partner.verify(webhookDuring)).toBe('sign');
    expect(await kidPartner(rfc9421Twin(webhookDuring))).toBe(oldWebhookId);
    expect(await kidPartner(ed25519Twin(webhookDuring))).toBe(oldEd25519.kid);
    const tokenDuring = await api.token(app);
    expect(decodeProtectedHeader(tokenDuring).kid).toBe(decodeProtectedHeader(tokenBefore).kid);
    expect(Date.now()).toBeLessThan(Date.parse(rotation.data.activatesAt));

    // The switch: `sign` is the new key; the daemon noticed the CLI's rotation without a restart.
    await eventually(
      async () => (await signKey()).n === during.find((k) => k.kid === nextWebhook!.id)!.n,
      (LEAD_S + 5) * 1000,
      'the new key to become `sign`',
    );
    // The delivery thread picks the new key up within a second or so; until then the old key (still published) signs.
    // The kid-caching partner meets a kid it has not seen, fetches the JWKS once more, and verifies.
    const webhookAfter = await eventually(
      async () => {
        const w = await webhook();
        const kid = await kidPartner(rfc9421Twin(w));
        expect([oldWebhookId, nextWebhook!.id]).toContain(kid);
        const edKid = await kidPartner(ed25519Twin(w));
        expect([oldEd25519.kid, nextEd25519!.id]).toContain(edKid);
        return kid === nextWebhook!.id && edKid === nextEd25519!.id ? w : undefined;
      },
      10_000,
      'a webhook signed by the new key',
    );
    expect(await partner.verify(webhookAfter)).toBe('sign');
    expect(await kidPartner(rfc9421Twin(webhookDuring))).toBe(oldWebhookId);
    expect(await kidPartner(ed25519Twin(webhookDuring))).toBe(oldEd25519.kid);
    expect(await partner.verify(ed25519Twin(webhookAfter))).toBe(nextEd25519!.id);
    const tokenAfter = await api.token(app);
    expect(decodeProtectedHeader(tokenAfter).kid).toBe(nextToken!.id);

    // In flight: signed by the old key, arriving after the partner re-fetched. The old key is still published.
    expect((await jwks()).filter((k) => k.n === oldSign.n).map((k) => k.kid)).toEqual([oldWebhookId]);
    expect(await new JwksWebhookVerifier(api.jwksUrl).verify(webhookDuring)).toBe(oldWebhookId);
    expect(await new JwksWebhookVerifier(api.jwksUrl).verify(webhookBefore)).toBe(oldWebhookId);
    for (const token of [tokenBefore, tokenDuring, tokenAfter]) {
      await verifyToken(token);
      expect((await api.call('GET', '/charge-points', { token })).status).toBe(200);
    }

    // After the grace period the old webhook key is gone; the old token key stays while its tokens can live.
    await eventually(
      async () => !(await jwks()).some((k) => k.kid === oldWebhookId),
      (GRACE_S + 5) * 1000,
      'the old webhook key to leave the JWKS',
    );
    expect((await jwks()).map((k) => k.kid)).toContain(decodeProtectedHeader(tokenBefore).kid);
    expect((await api.call('GET', '/charge-points', { token: tokenBefore })).status).toBe(200);
    expect(await new JwksWebhookVerifier(api.jwksUrl).verify(webhookBefore)).toBeUndefined();
    expect((await jwks()).map((k) => k.kid)).not.toContain(oldEd25519.kid);
    expect(await kidCachingRfc9421Verifier(api.jwksUrl)(ed25519Twin(webhookBefore))).toBeUndefined();

    const list = await runCliJson<KeyInfo[]>(['keys', 'list', '--config', api.temp.configPath]);
    expect(list.data.map((k) => [k.purpose, k.state])).toEqual([
      ['webhook', 'expired'],
      ['token', 'retired'],
      ['webhook-ed25519', 'expired'],
      ['webhook', 'signing'],
      ['token', 'signing'],
      ['webhook-ed25519', 'signing'],
    ]);
  });
});
