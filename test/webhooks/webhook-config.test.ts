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
      signature: 'documented',
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
    expect(refusal(withWebhook({ id: 'w', url: 'http://p', auth: { type: 'token' } }))).toContain(
      'sites[0].webhooks[0].auth.token',
    );
  });
});
