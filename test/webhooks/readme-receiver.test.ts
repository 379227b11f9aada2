import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../src/webhooks/index.js';
import { ownWebhookKeys } from '../support/webhook-verifier.js';
import { namedFence } from '../support/docs.js';
import { eventually, freePort, webhookTestResources } from './harness.js';

/** The partner's example receiver exactly as docs/partners/webhooks.md#receiving-webhooks-partners prints it. */
function readmeReceiver(): string {
  return namedFence('docs/partners/webhooks.md', 'receiver-example');
}

const t = webhookTestResources();

describe('README receiver example', () => {
  it('runs as printed, accepts the daemon signed events (documented, rfc9421 ed25519) and refuses forged signatures', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'readme-receiver-'));
    t.onCleanup(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'receiver.mjs');
    writeFileSync(file, readmeReceiver());
    const port = await freePort();
    const daemon = await t.daemon([
      { id: 'partner', url: `http://127.0.0.1:${port}/webhook/events`, events: ['Authorize'] },
      {
        id: 'partner-ed25519',
        url: `http://127.0.0.1:${port}/webhook/fast`,
        events: ['Authorize'],
        signature: { profile: 'rfc9421', alg: 'ed25519' },
      },
    ]);
    const output: string[] = [];
    const child = spawn(process.execPath, [file], {
      env: { ...process.env, ISSUER: `http://127.0.0.1:${daemon.daemon.httpPort}`, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.onCleanup(() => void child.kill('SIGKILL'));
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));

    const station = await daemon.connect();
    await station.boot();
    await station.authorize('README-1');
    const eventId = daemon.db.prepare('SELECT event_id FROM events').pluck().get() as string;
    const delivered = () =>
      daemon.db
        .prepare("SELECT webhook_id FROM deliveries WHERE state = 'delivered' ORDER BY webhook_id")
        .pluck()
        .all();
    await eventually(() => delivered().length === 2, 20_000, 'delivered to the README receiver, both webhooks');
    expect(delivered()).toEqual(['partner', 'partner-ed25519']);
    const printed = `Authorize ${eventId} {"stationId":"CP001","idTag":"README-1","status":"Invalid"`;
    expect(output.join('').split(printed)).toHaveLength(3);

    const forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const url = new URL(`http://127.0.0.1:${port}/webhook/events`);
    const requestId = '6a1c3c9e-53b4-4d0e-a6f4-7f3c2f9d1b20';
    const body = '{"eventId":"forged"}';
    // Forged with keys the gateway never published; the Ed25519 one names the gateway's own Ed25519 kid.
    const jwks = (await (await fetch(`http://127.0.0.1:${daemon.daemon.httpPort}/.well-known/jwks.json`)).json()) as {
      keys: Array<{ kid: string; kty: string }>;
    };
    const keys = ownWebhookKeys(forger);
    keys.ed25519.id = jwks.keys.find((k) => k.kty === 'OKP')!.kid;
    for (const signature of [
      { profile: 'documented', alg: 'rsa-pss-sha256' },
      { profile: 'rfc9421', alg: 'ed25519' },
    ] as const) {
      const headers = await signRequest(
        signature,
        { method: 'POST', url, requestId, contentType: 'application/json', body },
        keys,
        Math.floor(Date.now() / 1000),
      );
      const response = await fetch(url, {
        method: 'POST',
        body,
        headers: [['Content-Type', 'application/json'], ['x-request-id', requestId], ...headers],
      });
      expect(response.status, signature.alg).toBe(401);
    }
  });
});
