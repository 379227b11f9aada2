import { createPublicKey, type KeyObject } from 'node:crypto';
import { expect, onTestFinished } from 'vitest';
import {
  startReceiver,
  type Answer,
  type ReceivedRequest,
  type Receiver,
  type Responder,
} from '../support/receiver.js';
import { fetchJwks, verifyDocumentedSignature, verifyRfc9421Signature } from '../support/webhook-verifier.js';
import { startDaemon, type Daemon } from '../../src/cli/daemon.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { CP001, startTestDaemon, type TestDaemon, type TestDaemonOptions } from '../support/daemon.js';
import { logSink } from '../support/captured-log.js';

export { eventually } from '../support/daemon.js';

/** Config overrides: site s1 with station CP001 and these webhooks, delivery timings shortened for tests. */
export function webhookConfig(
  webhooks: Array<Record<string, unknown>>,
  delivery: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    sites: [{ id: 's1', stations: [CP001], meters: [], webhooks }],
    webhookDelivery: { retryIntervalS: 0.2, maxRetries: 360, queueCapacity: 1000, requestTimeoutMs: 2000, ...delivery },
  };
}

export async function startWebhookDaemon(
  webhooks: Array<Record<string, unknown>>,
  delivery: Record<string, unknown> = {},
): Promise<TestDaemon> {
  return startTestDaemon(webhookConfig(webhooks, delivery));
}

export interface WebhookTestResources {
  /** A receiver on loopback, closed after the test. */
  receiver(answer?: Responder | Answer): Promise<Receiver>;
  /** An in-process daemon with these webhooks, stopped after the test. */
  daemon(webhooks: Array<Record<string, unknown>>, delivery?: Record<string, unknown>): Promise<TestDaemon>;
  /** Anything else to release after the test, before the daemon stops. */
  onCleanup(release: () => Promise<void> | void): void;
}

/**
 * Per-test resources, released when the test finishes: receivers and other servers first (requests hanging on
 * them then end at once instead of holding the daemon's stop grace period), then the daemon.
 */
export function webhookTestResources(): WebhookTestResources {
  const releases: Array<() => Promise<void> | void> = [];
  const releaseAll = async (): Promise<void> => {
    await Promise.all(releases.splice(0).map((release) => release()));
  };
  // Every hook drains what is left, so the servers go first whichever was made first, the daemon or they.
  const onCleanup = (release: () => Promise<void> | void): void => {
    releases.push(release);
    onTestFinished(releaseAll);
  };
  return {
    async receiver(answer) {
      const receiver = await startReceiver(answer);
      onCleanup(() => receiver.close());
      return receiver;
    },
    async daemon(webhooks, delivery) {
      const daemon = await startWebhookDaemon(webhooks, delivery);
      onTestFinished(async () => {
        await releaseAll();
        await daemon.stop();
      });
      return daemon;
    },
    onCleanup,
  };
}

export { freePort } from '../support/free-port.js';

/** Rewrites the config file and reloads the daemon, as SIGHUP does. */
export async function reconfigure(
  daemon: TestDaemon,
  webhooks: Array<Record<string, unknown>>,
  delivery: Record<string, unknown> = {},
): Promise<void> {
  daemon.temp.write({ log: { level: 'info' }, ...webhookConfig(webhooks, delivery) });
  await daemon.daemon.reload();
}

/**
 * Stops the test daemon (keeping its data dir and config) and starts a fresh daemon on them, as a restart does.
 * The caller stops the returned daemon; test.stop() later only cleans up.
 */
export async function restartDaemon(
  test: TestDaemon,
  options: TestDaemonOptions = {},
): Promise<{ daemon: Daemon; logs: Array<Record<string, unknown>> }> {
  await test.daemon.stop();
  const { sink, lines: logs } = logSink();
  const config = loadConfig(test.temp.configPath);
  return {
    daemon: await startDaemon({
      configPath: test.temp.configPath,
      config,
      logger: createLogger(config.log.level, sink),
      handleSignals: false,
      ...options,
    }),
    logs,
  };
}

/** The public key partners verify with: kid "sign" from the daemon's GET /.well-known/jwks.json. */
export async function jwksSigningKey(daemon: TestDaemon): Promise<KeyObject> {
  const keys = await fetchJwks(`http://127.0.0.1:${daemon.daemon.httpPort}/.well-known/jwks.json`);
  const sign = keys.find((k) => k.kid === 'sign');
  if (!sign) throw new Error('no kid "sign" in the JWKS');
  expect(sign).toMatchObject({ alg: 'PS256', use: 'sig' });
  return createPublicKey({ key: sign as never, format: 'jwk' });
}

export interface DeliveryRow {
  event_id: string;
  event_type: string;
  webhook_id: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  dead_reason: string | null;
}

export function deliveries(daemon: TestDaemon, webhookId?: string): DeliveryRow[] {
  return daemon.db
    .prepare(
      `SELECT e.event_id, e.event_type, d.webhook_id, d.state, d.attempts, d.last_status, d.last_error, d.dead_reason
         FROM deliveries d JOIN events e ON e.seq = d.event_seq ${webhookId ? 'WHERE d.webhook_id = ?' : ''} ORDER BY d.id`,
    )
    .all(...(webhookId ? [webhookId] : [])) as DeliveryRow[];
}

/** A random UUID (version 4): each request's x-request-id. */
const RANDOM_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** A time-ordered UUID (version 7, RFC 9562): event ids, which sort in the order the events were stored. */
const TIME_ORDERED_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/;

/**
 * Asserts one received request is a well-formed webhook per interface document 4.4 and contract section 5 and
 * that its signature verifies (documented profile with the contract-text verifier, rfc9421 with
 * http-message-signatures). Returns the parsed envelope.
 */
export async function expectSignedWebhook(
  request: ReceivedRequest,
  publicKey: KeyObject,
  profile: 'documented' | 'rfc9421' = 'documented',
): Promise<Record<string, unknown>> {
  expect(request.method).toBe('POST');
  expect(request.headers['content-type']).toBe('application/json');
  expect(Number(request.headers['content-length'])).toBe(request.body.length);
  expect(request.headers['x-request-id']).toMatch(RANDOM_UUID);
  const envelope = request.json();
  // The interface document's fields in its order; contract section 8 adds occurredAt (and test on a `webhook test`).
  const expectedKeys = [
    'eventId',
    'eventType',
    'siteId',
    'timestamp',
    'occurredAt',
    ...(envelope.test === true ? ['test'] : []),
    'payload',
  ];
  expect(Object.keys(envelope)).toEqual(expectedKeys);
  expect(envelope.eventId).toMatch(TIME_ORDERED_UUID);
  expect(envelope.timestamp).toMatch(TIMESTAMP);
  expect(envelope.occurredAt).toMatch(TIMESTAMP);
  expect(Date.parse(envelope.occurredAt as string)).toBeLessThanOrEqual(Date.parse(envelope.timestamp as string));
  expect(request.text()).toBe(JSON.stringify(envelope));
  const verified =
    profile === 'documented'
      ? verifyDocumentedSignature(request, publicKey)
      : await verifyRfc9421Signature(request, publicKey);
  expect(verified, `signature of request ${request.index} (${profile})`).toBe(true);
  return envelope;
}
