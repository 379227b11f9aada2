import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ConfigError, parseConfig } from '../../src/config/index.js';
import { baseConfig } from '../support/temp-site.js';

function withWebhook(webhook: Record<string, unknown>): string {
  const config = baseConfig('/tmp/unused');
  return stringify({ ...config, sites: [{ id: 's1', webhooks: [webhook] }] });
}

function refusal(text: string): string {
  try {
    parseConfig(text, 'chargegate.yaml');
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('config was accepted');
}

describe('webhook config', () => {
  it('defaults to enabled, every event type, no auth and the documented signature', () => {
    const [webhook] = parseConfig(withWebhook({ id: 'w', url: 'https://partner.example/webhook/events' })).sites[0]!
      .webhooks;
    expect(webhook).toEqual({
      id: 'w',
      url: 'https://partner.example/webhook/events',
      enabled: true,
      events: ['Authorize', 'StartTransaction', 'StopTransaction', 'ChargePointStatus'],
      auth: { type: 'none' },
      signature: { profile: 'documented', alg: 'rsa-pss-sha256' },
    });
  });

  it('refuses a URL that is not http(s), an unknown auth method or signature profile, naming the key path', () => {
    expect(refusal(withWebhook({ id: 'w', url: 'ftp://partner.example/in' }))).toMatch(
      /chargegate\.yaml: sites\[0\]\.webhooks\[0\]\.url: .*http/,
    );
    expect(
      refusal(
        withWebhook({
          id: 'w',
          url: 'http://p',
          auth: {
            type: 'oauth2',
            tokenUrl: 'http://p/t',
            clientId: 'c',
            clientSecret: 's',
            tokenEndpointAuthMethod: 'private_key_jwt',
          },
        }),
      ),
    ).toContain('sites[0].webhooks[0].auth.tokenEndpointAuthMethod');
    expect(refusal(withWebhook({ id: 'w', url: 'http://p', signature: 'cavage' }))).toContain(
      'sites[0].webhooks[0].signature',
    );
    expect(
      refusal(withWebhook({ id: 'w', url: 'http://p', signature: { profile: 'rfc9421', alg: 'ed448' } })),
    ).toContain(
      'sites[0].webhooks[0].signature.alg: "ed448" is none of ed25519, rsa-pss-sha512 (profile rfc9421), rsa-pss-sha256 (profile documented)',
    );
    expect(refusal(withWebhook({ id: 'w', url: 'http://p', auth: { type: 'token' } }))).toContain(
      'sites[0].webhooks[0].auth.token',
    );
  });

  it('takes the string forms and { profile, alg } as one shape: the profile and the algorithm it signs with', () => {
    const signature = (value: unknown) =>
      parseConfig(withWebhook({ id: 'w', url: 'http://p', signature: value })).sites[0]!.webhooks[0]!.signature;
    expect(signature('documented')).toEqual({ profile: 'documented', alg: 'rsa-pss-sha256' });
    expect(signature({ profile: 'documented' })).toEqual({ profile: 'documented', alg: 'rsa-pss-sha256' });
    expect(signature('rfc9421')).toEqual({ profile: 'rfc9421', alg: 'rsa-pss-sha512' });
    expect(signature({ profile: 'rfc9421' })).toEqual({ profile: 'rfc9421', alg: 'rsa-pss-sha512' });
    expect(signature({ profile: 'rfc9421', alg: 'rsa-pss-sha512' })).toEqual({
      profile: 'rfc9421',
      alg: 'rsa-pss-sha512',
    });
    expect(signature({ profile: 'rfc9421', alg: 'ed25519' })).toEqual({ profile: 'rfc9421', alg: 'ed25519' });
  });

  it('refuses an algorithm the profile does not sign with, naming the key path: documented is RSA-PSS-SHA256 only', () => {
    expect(
      refusal(withWebhook({ id: 'w', url: 'http://p', signature: { profile: 'documented', alg: 'ed25519' } })),
    ).toBe(
      'chargegate.yaml: sites[0].webhooks[0].signature.alg: the documented profile is rsa-pss-sha256 only; ed25519 and rsa-pss-sha512 need profile rfc9421',
    );
    expect(
      refusal(withWebhook({ id: 'w', url: 'http://p', signature: { profile: 'rfc9421', alg: 'rsa-pss-sha256' } })),
    ).toContain('sites[0].webhooks[0].signature.alg: rfc9421 signs with ed25519 or rsa-pss-sha512');
  });
});
