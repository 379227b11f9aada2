import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookConfig } from '../../src/config/index.js';
import { WebhookSender } from '../../src/webhooks/webhook-sender.js';
import { startReceiver, type Receiver } from '../support/receiver.js';
import { verifyDocumentedSignature } from '../support/webhook-verifier.js';

const pairs = [
  generateKeyPairSync('rsa', { modulusLength: 2048 }),
  generateKeyPairSync('rsa', { modulusLength: 2048 }),
];
const keys = pairs.map((pair, i) => ({ id: `webhook-key-${i}`, privateKey: pair.privateKey }));
const event = {
  eventId: '0193a1f0-0000-7000-8000-000000000001',
  eventType: 'Authorize' as const,
  siteId: 's1',
  payloadJson: '{"idTag":"T1"}',
  occurredAt: '2026-11-25T09:00:00.000Z',
};
const options = { timeZone: 'Europe/Brussels', timeoutMs: 5000 };

/** A sender signing ahead of its turn (what a busy queue does) against a real receiver, on a clock the test moves. */
describe('WebhookSender: requests signed ahead', () => {
  let receiver: Receiver;
  let webhook: WebhookConfig;
  let now = Date.parse('2026-11-25T09:00:00.000Z');
  let key = keys[0]!;
  const ed25519 = { id: 'ed25519-key', privateKey: generateKeyPairSync('ed25519').privateKey };
  const sender = new WebhookSender({ signingKeys: () => ({ rsa: key, ed25519 }), now: () => now });

  beforeAll(async () => {
    receiver = await startReceiver({ status: 204 });
    webhook = {
      id: 'w1',
      url: receiver.url(),
      enabled: true,
      events: ['Authorize'],
      auth: { type: 'none' },
      signature: { profile: 'documented', alg: 'rsa-pss-sha256' },
    };
  });
  afterAll(async () => {
    await sender.close();
    await receiver.close();
  });

  /** The last request the receiver got: its x-request-id and envelope timestamp, and which key's signature it bears. */
  function lastArrival(): { requestId: unknown; timestamp: string; signedBy: number } {
    const request = receiver.requests.at(-1)!;
    return {
      requestId: request.headers['x-request-id'],
      timestamp: request.json<{ timestamp: string }>().timestamp,
      signedBy: pairs.findIndex((pair) => verifyDocumentedSignature(request, pair.publicKey)),
    };
  }

  it('sends a fresh request signed ahead as it was signed', async () => {
    const prepared = sender.prepare(webhook, event, options.timeZone);
    now += 400;
    const outcome = await sender.send(webhook, event, { ...options, prepared });
    expect(outcome).toMatchObject({ delivered: true, status: 204, requestId: (await prepared).requestId });
    expect(lastArrival()).toEqual({
      requestId: (await prepared).requestId,
      timestamp: '2026-11-25T10:00:00.000+01:00',
      signedBy: 0,
    });
  });

  it('signs again when the request signed ahead is too old to say when it was sent', async () => {
    const prepared = sender.prepare(webhook, event, options.timeZone);
    now += 501;
    const outcome = await sender.send(webhook, event, { ...options, prepared });
    expect(outcome.delivered).toBe(true);
    expect(outcome.requestId).not.toBe((await prepared).requestId);
    expect(lastArrival()).toMatchObject({ requestId: outcome.requestId, signedBy: 0 });
    expect(lastArrival().timestamp).not.toBe((await prepared).body.match(/"timestamp":"([^"]+)"/)![1]);
  });

  it('signs again with the new key when the key rotated after signing ahead', async () => {
    const prepared = sender.prepare(webhook, event, options.timeZone);
    key = keys[1]!;
    const outcome = await sender.send(webhook, event, { ...options, prepared });
    expect(outcome.requestId).not.toBe((await prepared).requestId);
    expect(lastArrival()).toMatchObject({ requestId: outcome.requestId, signedBy: 1 });
  });

  it('signs again for a webhook whose URL or profile changed after signing ahead', async () => {
    const prepared = sender.prepare(webhook, event, options.timeZone);
    const moved = { ...webhook, url: receiver.url('/webhook/moved') };
    const outcome = await sender.send(moved, event, { ...options, prepared });
    expect(outcome.delivered).toBe(true);
    expect(receiver.requests.at(-1)!.path).toBe('/webhook/moved');
    expect(outcome.requestId).not.toBe((await prepared).requestId);
  });

  it('signs again when signing ahead failed: a key too small for the signature, replaced before the send', async () => {
    // A real signing failure: RSA-PSS with SHA-256 and a 32-byte salt does not fit a 512-bit key.
    key = { id: 'webhook-too-small', privateKey: generateKeyPairSync('rsa', { modulusLength: 512 }).privateKey };
    const prepared = sender.prepare(webhook, event, options.timeZone);
    await expect(prepared).rejects.toThrow('data too large for key size');
    key = keys[1]!;
    const outcome = await sender.send(webhook, event, { ...options, prepared });
    expect(outcome).toMatchObject({ delivered: true, status: 204 });
    expect(lastArrival()).toMatchObject({ requestId: outcome.requestId, signedBy: 1 });
  });

  it("reports a signing failure as the attempt's error, nothing sent", async () => {
    key = { id: 'webhook-too-small', privateKey: generateKeyPairSync('rsa', { modulusLength: 512 }).privateKey };
    const before = receiver.requests.length;
    const outcome = await sender.send(webhook, event, {
      ...options,
      prepared: sender.prepare(webhook, event, options.timeZone),
    });
    expect(outcome).toMatchObject({ delivered: false, error: expect.stringContaining('data too large for key size') });
    expect(receiver.requests).toHaveLength(before);
    key = keys[1]!;
  });
});
