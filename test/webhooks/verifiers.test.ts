import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { PublicJwk } from '../../src/keystore/index.js';
import { signRequest } from '../../src/webhooks/index.js';
import { ROOT, runCliJson } from '../support/cli.js';
import { daemonForTest } from '../support/daemon.js';
import { tempDirForTest } from '../support/for-test.js';
import { freePort } from '../support/free-port.js';
import { externalTool } from '../support/meter-simulator.js';
import { ownWebhookKeys } from '../support/webhook-verifier.js';
import { eventually, webhookConfig } from './harness.js';

const VERIFIERS = path.join(ROOT, 'docs/partners/receivers');

interface VerifierLine {
  verified: boolean;
  profile?: 'documented' | 'rfc9421';
  alg?: 'rsa-pss-sha256' | 'rsa-pss-sha512' | 'ed25519';
  kid?: string;
  eventId?: string;
  eventType?: string;
}

/** One of the receivers of docs/partners/receivers as a partner runs it: its own process, talking to the daemon over loopback. */
interface Language {
  name: string;
  available: () => boolean;
  /** The command that runs the receiver; `build` compiles first where the language needs it. */
  command(scratch: string): { command: string; args: string[] };
}

// Python (python3-cryptography) and Go (golang-go) come from .ci/run's apt-get; the JDK is on every machine of this
// kind.
const LANGUAGES: Language[] = [
  {
    name: 'Python (python3-cryptography)',
    available: () => externalTool('/usr/bin/python3', ['-c', 'import cryptography']),
    command: () => ({ command: '/usr/bin/python3', args: [path.join(VERIFIERS, 'receiver.py')] }),
  },
  {
    name: 'Go (standard library)',
    available: () => externalTool('go', ['version']),
    command: (scratch) => {
      const binary = path.join(scratch, 'receiver');
      const built = spawnSync('go', ['build', '-o', binary, path.join(VERIFIERS, 'receiver.go')], {
        encoding: 'utf8',
        env: { ...process.env, GOCACHE: path.join(scratch, 'gocache') },
      });
      if (built.status !== 0) throw new Error(`go build failed: ${built.stderr}`);
      return { command: binary, args: [] };
    },
  },
  {
    name: 'Java (JDK 17, no libraries)',
    available: () => externalTool('java', ['-version']),
    command: () => ({ command: 'java', args: [path.join(VERIFIERS, 'Receiver.java')] }),
  },
];

describe.each(LANGUAGES)('the partner receiver in $name', (language) => {
  it.skipIf(!language.available())(
    'verifies every webhook of both profiles and both rfc9421 algorithms from a real daemon, across a key rotation, and refuses forgeries',
    async () => {
      const scratch = tempDirForTest('verifier');
      const port = await freePort();
      const url = `http://127.0.0.1:${port}/webhook/events`;
      const daemon = await daemonForTest({
        ...webhookConfig([
          { id: 'documented', url, events: ['ChargePointStatus', 'StartTransaction', 'StopTransaction'] },
          {
            id: 'rfc9421',
            url,
            events: ['ChargePointStatus', 'StartTransaction', 'StopTransaction'],
            signature: 'rfc9421',
          },
          {
            id: 'ed25519',
            url,
            events: ['ChargePointStatus', 'StartTransaction', 'StopTransaction'],
            signature: { profile: 'rfc9421', alg: 'ed25519' },
          },
        ]),
        keystore: { nextKeyLeadS: 1, retiredKeyGraceS: 600 },
      });
      const issuer = `http://127.0.0.1:${daemon.daemon.httpPort}`;

      const { command, args } = language.command(scratch);
      const child: ChildProcess = spawn(command, args, {
        env: { ...process.env, ISSUER: issuer, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      onTestFinished(() => void child.kill('SIGKILL'));
      const stderr: string[] = [];
      child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
      const lines: VerifierLine[] = [];
      const listening = new Promise<void>((resolve) =>
        createInterface({ input: child.stdout! }).on('line', (line) => {
          const parsed = JSON.parse(line) as VerifierLine & { listening?: number };
          if (parsed.listening !== undefined) resolve();
          else lines.push(parsed);
        }),
      );
      await Promise.race([
        listening,
        new Promise((_, reject) =>
          child.once('exit', (code) => reject(new Error(`receiver exited ${code}: ${stderr.join('')}`))),
        ),
      ]);

      const jwks = async () =>
        ((await (await fetch(`${issuer}/.well-known/jwks.json`)).json()) as { keys: PublicJwk[] }).keys;
      const ownKid = async (): Promise<string> => {
        const keys = await jwks();
        const sign = keys.find((k) => k.kid === 'sign')!;
        return keys.find((k) => k.n === sign.n && k.kid !== 'sign')!.kid;
      };
      const session = async (connectorId: number) => {
        const station = await daemon.connect('CP001');
        await station.boot();
        await station.statusNotification({ connectorId, status: 'Preparing' });
        const transactionId = await station.startTransaction({ connectorId, idTag: 'TAG-1', meterStart: 1000 });
        await station.stopTransaction({ transactionId, meterStop: 2500 });
        await station.close();
      };
      const before = await ownKid();
      // Before any rotation the JWKS has one Ed25519 key, the one that signs.
      const edBefore = (await jwks()).find((k) => k.kty === 'OKP')!.kid;
      const expectAllVerified = async (kid: string, edKid: string) => {
        const committed = daemon.db
          .prepare("SELECT event_id AS eventId, event_type AS eventType FROM events WHERE event_type != 'Authorize'")
          .all() as Array<{
          eventId: string;
          eventType: string;
        }>;
        await eventually(
          () => lines.length >= committed.length * 3,
          30_000,
          `${committed.length * 3} verified requests`,
        );
        expect(lines.filter((l) => !l.verified)).toEqual([]);
        for (const event of committed) {
          const seen = lines.filter((l) => l.eventId === event.eventId);
          expect(seen.map((l) => `${l.profile} ${l.alg}`).sort()).toEqual([
            'documented rsa-pss-sha256',
            'rfc9421 ed25519',
            'rfc9421 rsa-pss-sha512',
          ]);
          expect(seen.every((l) => l.eventType === event.eventType)).toBe(true);
        }
        // rfc9421 names the key's own kid; the documented profile verifies with `sign` (or, for a request signed just
        // before the switch and checked after the receiver fetched the JWKS again, the old key's own kid).
        expect(new Set(lines.filter((l) => l.alg === 'rsa-pss-sha512').map((l) => l.kid))).toContain(kid);
        expect(new Set(lines.filter((l) => l.alg === 'ed25519').map((l) => l.kid))).toContain(edKid);
        for (const l of lines.filter((l) => l.profile === 'documented')) expect(['sign', before]).toContain(l.kid);
      };

      await session(1);
      await expectAllVerified(before, edBefore);

      // A rotation: the new key signs after 1 s; the receiver meets its kid and fetches the JWKS again.
      const rotated = await runCliJson<{ keys: Array<{ purpose: string; id: string }> }>([
        'keys',
        'rotate',
        '--config',
        daemon.temp.configPath,
      ]);
      expect(rotated.code).toBe(0);
      const next = rotated.data.keys.find((k) => k.purpose === 'webhook')!.id;
      const edNext = rotated.data.keys.find((k) => k.purpose === 'webhook-ed25519')!.id;
      await eventually(async () => (await ownKid()) === next, 10_000, 'the new key to sign');
      // The daemon's delivery thread takes the new key within a second: sessions until one is signed by it.
      await eventually(
        async () => {
          await session(2);
          await expectAllVerified(before, edBefore);
          return (
            lines.some((l) => l.alg === 'rsa-pss-sha512' && l.kid === next) &&
            lines.some((l) => l.alg === 'ed25519' && l.kid === edNext)
          );
        },
        20_000,
        'webhooks signed by the new RSA and Ed25519 keys, verified',
      );

      // A forgery: a well-formed request signed by a key the gateway never published.
      const forged = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-request-id': '6a1c3c9e-53b4-4d0e-a6f4-7f3c2f9d1b20',
          'signature-input': `sig1=created=${Math.floor(Date.now() / 1000)};keyId="webhook";alg="rsa-pss-sha256";headers="@method @path x-request-id"`,
          signature: `sig1=:${Buffer.alloc(384, 7).toString('base64')}:`,
        },
        body: '{"eventId":"forged","eventType":"StopTransaction"}',
      });
      expect(forged.status).toBe(401);
      await eventually(() => lines.at(-1)?.verified === false, 5000, 'the forgery reported');

      // An ed25519 forgery naming the gateway's own Ed25519 kid, signed by a key the gateway never published.
      const forger = ownWebhookKeys(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
      const body = '{"eventId":"forged-ed25519","eventType":"StopTransaction"}';
      const requestId = '0b6f0c52-2d6c-4c55-9d54-0a4f3c3f1e2a';
      const signed = await signRequest(
        { profile: 'rfc9421', alg: 'ed25519' },
        { method: 'POST', url: new URL(url), requestId, contentType: 'application/json', body },
        { ...forger, ed25519: { ...forger.ed25519, id: edNext } },
        Math.floor(Date.now() / 1000),
      );
      const count = lines.length;
      const edForged = await fetch(url, {
        method: 'POST',
        headers: [['Content-Type', 'application/json'], ['x-request-id', requestId], ...signed],
        body,
      });
      expect(edForged.status).toBe(401);
      await eventually(() => lines.length > count, 5000, 'the ed25519 forgery reported');
      expect(lines.at(-1)).toEqual({ verified: false });
    },
    120_000,
  );
});
