import { randomUUID } from 'node:crypto';
import { configSchema, type Config, type WebhookSignature } from '../../../src/config/index.js';
import { openKeystore, type Keystore } from '../../../src/keystore/index.js';
import { appendEvent, DeliveryStore } from '../../../src/outbox/index.js';
import { inTransaction, openDatabase, type Database } from '../../../src/store/index.js';
import { keyFor, signRequest, WebhookSender } from '../../../src/webhooks/index.js';
import { nowMs, sleepUntil } from '../measure.js';
import { serveWorker } from '../worker-protocol.js';

/**
 * Scenario 1's baseline: the same primitives chargegate delivers with, chained naively in one loop — commit the
 * event and its delivery row (synchronous=FULL), sign and POST it with undici (chargegate's own sender, the
 * scenario's signature with the keystore's key), commit the outcome — one event at a time.
 */
let chain: { config: Config; db: Database; keystore: Keystore } | undefined;

function opened(): NonNullable<typeof chain> {
  if (!chain) throw new Error('open first');
  return chain;
}

const NAIVE_STATION = 'NAIVE';

/** Commits a StartTransaction event with meterStart n and its delivery row, signs and POSTs it, commits the outcome. */
function oneEventChain(): { deliver(n: number): Promise<void>; close(): Promise<void> } {
  const { config, db, keystore } = opened();
  const site = config.sites[0]!;
  const webhook = site.webhooks[0]!;
  const store = new DeliveryStore(db);
  const sender = new WebhookSender({ signingKeys: () => keystore.webhookSigningKeys() });
  const queue = { siteId: site.id, webhookId: webhook.id, eventType: 'StartTransaction' as const };
  return {
    async deliver(n) {
      const event = {
        stationId: NAIVE_STATION,
        chargePointId: 'NAIVE-A',
        connectorId: 1,
        idTag: 'TAG-NAIVE',
        meterStart: n,
        transactionId: n,
      };
      const { eventId } = inTransaction(db, () =>
        appendEvent(db, { eventType: queue.eventType, siteId: site.id, payload: event }, [webhook.id], new Date()),
      );
      const delivery = store.head(queue, 1)[0]!;
      const outcome = await sender.send(
        webhook,
        {
          eventId,
          eventType: queue.eventType,
          siteId: site.id,
          payloadJson: delivery.payloadJson,
          occurredAt: delivery.occurredAt,
        },
        { timeZone: config.timezone, timeoutMs: config.webhookDelivery.requestTimeoutMs },
      );
      // The receiver is on loopback and always answers: a failure means the chain is broken, not slow.
      if (!outcome.delivered || outcome.status === undefined)
        throw new Error(`delivery failed: ${outcome.error ?? outcome.status}`);
      store.markDelivered(delivery.id, outcome.status, new Date());
    },
    close: () => sender.close(),
  };
}

export const naiveChainApi = {
  /** Database and keystore (key generation takes seconds) are made before anything is timed. */
  async open(payload: { dataDir: string; url: string; signature: WebhookSignature }): Promise<void> {
    const config = configSchema.parse({
      dataDir: payload.dataDir,
      sites: [{ id: 'naive', webhooks: [{ id: 'naive', url: payload.url, signature: payload.signature }] }],
    });
    chain = { config, db: openDatabase(config.dataDir), keystore: await openKeystore(config) };
  },

  /** delivered: within the measured window; total: every event of the run (for bytes written per event). */
  async run(payload: {
    startAtMs: number;
    warmupMs: number;
    measureMs: number;
  }): Promise<{ delivered: number; total: number }> {
    const chainOne = oneEventChain();
    const from = payload.startAtMs + payload.warmupMs;
    const to = from + payload.measureMs;
    let delivered = 0;
    let total = 0;
    await sleepUntil(payload.startAtMs);
    for (let n = 1; nowMs() < to; n++, total++) {
      await chainOne.deliver(n);
      const doneAt = nowMs();
      if (doneAt >= from && doneAt <= to) delivered += 1;
    }
    await chainOne.close();
    return { delivered, total };
  },

  /**
   * Scenario 2's baseline: one event per slot of a fixed timetable (open loop), keyed `NAIVE:meterStart` like the
   * receiver's arrivals, timed from its slot so an event held back by the one before it shows the delay.
   */
  async steady(payload: {
    startAtMs: number;
    durationMs: number;
    eventsPerS: number;
  }): Promise<{ starts: Array<{ key: string; sentAtMs: number }> }> {
    const chainOne = oneEventChain();
    const starts: Array<{ key: string; sentAtMs: number }> = [];
    const slotMs = 1000 / payload.eventsPerS;
    for (let n = 1; ; n++) {
      const slot = payload.startAtMs + (n - 1) * slotMs;
      if (slot >= payload.startAtMs + payload.durationMs) break;
      await sleepUntil(slot);
      await chainOne.deliver(n);
      starts.push({ key: `${NAIVE_STATION}:${n}`, sentAtMs: slot });
    }
    await chainOne.close();
    return { starts };
  },

  /**
   * The ceiling every webhook pipeline on this machine shares: signatures per second with the keystore's webhook
   * key of the chain's signature, through the same signing function, several at once so that every core can take
   * part (RSA signs on the thread pool; Ed25519 in place, on this thread only).
   */
  async signRate(payload: { durationMs: number }): Promise<{ signsPerS: number; keyBits: number | null }> {
    const { config, keystore } = opened();
    const { signature } = config.sites[0]!.webhooks[0]!;
    const keys = keystore.webhookSigningKeys();
    const request = {
      method: 'POST',
      url: new URL('http://127.0.0.1/webhook/events'),
      requestId: randomUUID(),
      contentType: 'application/json',
      body: '{}',
    };
    const startedAt = nowMs();
    const end = startedAt + payload.durationMs;
    let signs = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (nowMs() < end) {
          await signRequest(signature, request, keys, Math.floor(Date.now() / 1000));
          signs += 1;
        }
      }),
    );
    return {
      signsPerS: (signs * 1000) / (nowMs() - startedAt),
      keyBits: keyFor(signature, keys).privateKey.asymmetricKeyDetails?.modulusLength ?? null,
    };
  },

  close(): void {
    chain?.db.close();
    chain = undefined;
  },
};

export type NaiveChainApi = typeof naiveChainApi;

serveWorker(naiveChainApi);
