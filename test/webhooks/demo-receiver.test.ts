import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../src/webhooks/index.js';
import { startDemoReceiver } from '../../scripts/demo-receiver.js';
import { ownWebhookKeys } from '../support/webhook-verifier.js';
import { ROOT } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS, type TestDaemon } from '../support/daemon.js';
import { eventually, webhookTestResources } from './harness.js';

const t = webhookTestResources();

describe('demo receiver (scripts/demo-receiver.ts)', () => {
  it('verifies signed events of both profiles and both rfc9421 algorithms against the daemon JWKS, prints them, and rejects a forgery', async () => {
    const lines: string[] = [];
    let daemon: TestDaemon | undefined;
    const demo = await startDemoReceiver({
      issuer: () => `http://127.0.0.1:${daemon!.daemon.httpPort}`,
      port: 0,
      print: (line) => lines.push(line),
    });
    t.onCleanup(() => demo.receiver.close());
    daemon = await t.daemon([
      { id: 'documented', url: demo.receiver.url(), events: ['Authorize'] },
      { id: 'standard', url: demo.receiver.url('/std'), events: ['Authorize'], signature: 'rfc9421' },
      {
        id: 'fast',
        url: demo.receiver.url('/ed'),
        events: ['Authorize'],
        signature: { profile: 'rfc9421', alg: 'ed25519' },
      },
    ]);
    const station = await daemon.connect();
    await station.boot();
    await station.authorize('DEMO-1');
    await eventually(() => demo.verified === 3, 20_000, 'three verified events');
    // documented verifies with `sign`; rfc9421 with the key its keyid names: the RSA key's own kid, the Ed25519 key's.
    expect(lines.filter((l) => l.startsWith('verified (kid sign) Authorize '))).toHaveLength(1);
    expect(lines.filter((l) => /^verified \(kid webhook-[\w-]+\) Authorize /.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /^verified \(kid ed25519-[\w-]+\) Authorize /.test(l))).toHaveLength(1);
    expect(lines[0]).toContain('"idTag":"DEMO-1"');

    const forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const body = JSON.stringify({
      eventId: 'forged',
      eventType: 'StopTransaction',
      siteId: 's1',
      timestamp: '2026-11-21T10:15:30.123+01:00',
      payload: {},
    });
    const url = new URL(demo.receiver.url());
    const signature = await signRequest(
      { profile: 'documented', alg: 'rsa-pss-sha256' },
      { method: 'POST', url, requestId: '0b6f0c52-2d6c-4c55-9d54-0a4f3c3f1e2a', contentType: 'application/json', body },
      ownWebhookKeys(forger),
      Math.floor(Date.now() / 1000),
    );
    const response = await fetch(url, {
      method: 'POST',
      body,
      headers: [
        ['Content-Type', 'application/json'],
        ['x-request-id', '0b6f0c52-2d6c-4c55-9d54-0a4f3c3f1e2a'],
        ...signature,
      ],
    });
    expect(response.status).toBe(401);
    expect(demo.rejected).toBe(1);
    expect(lines.at(-1)).toMatch(/^REJECTED \(signature does not verify\)/);
  });
});

describe('demo receiver command line', () => {
  const runScript = (args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', path.join(ROOT, 'scripts/demo-receiver.ts'), ...args],
        { cwd: ROOT, timeout: 60_000 },
        (err, stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
      );
    });

  it(
    'answers an unknown option or a bad port with one line and the usage (exit 2), never a stack trace',
    async () => {
      for (const args of [
        ['--path', '/webhook'],
        ['--port', 'seven'],
      ]) {
        const { code, stderr } = await runScript(args);
        expect({ args, code }).toEqual({ args, code: 2 });
        expect(stderr).toContain('usage: demo-receiver');
        expect(stderr).not.toMatch(/\n\s+at /);
      }
      expect((await runScript(['--help'])).stdout).toContain('usage: demo-receiver');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
