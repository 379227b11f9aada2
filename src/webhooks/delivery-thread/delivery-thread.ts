// Delivery thread: runs in the worker thread that delivery-thread.ts starts, off the daemon's event loop.
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../../config/index.js';
import { createLogger } from '../../log/index.js';
import type { QueueKey } from '../../outbox/index.js';
import { DeliveryEngine } from './delivery-engine.js';
import { WriteBatch } from './write-batch.js';
import type { DeliveryThreadData, FromDeliveryThread, ToDeliveryThread } from '../delivery-thread-messages.js';

/**
 * The delivery thread's entry point: runs the DeliveryEngine on its own event loop and database connection, so
 * a burst of station calls on the main thread cannot hold back signing and sending. It talks to the daemon only
 * through messages (delivery-thread-messages.ts).
 */
const port = parentPort;
if (!port) throw new Error('delivery-thread.ts runs as a worker thread');
const post = (message: FromDeliveryThread): void => port.postMessage(message);
const data = workerData as DeliveryThreadData;

let config: Config = data.config;
let signingKeys = data.signingKeys;
const logger = createLogger(data.logLevel, { write: (line: string) => post({ kind: 'log', line }) }).child({
  component: 'webhooks',
});
const queueOf = (q: QueueKey): QueueKey => ({ siteId: q.siteId, webhookId: q.webhookId, eventType: q.eventType });
/**
 * How long a recorded outcome may wait here for others to travel with it; the daemon then holds them for a commit to
 * share (GroupCommit.writeHeld). After a crash, the deliveries of about those two waits are sent again (at-least-once;
 * partners deduplicate by eventId).
 */
const OUTCOME_LINGER_MS = 20;
const writes = new WriteBatch((batch, w) => post({ kind: 'write', batch, writes: w }), OUTCOME_LINGER_MS);

const engine = new DeliveryEngine({
  dataDir: data.dataDir,
  writes,
  config: () => config,
  logger,
  signingKeys: () => signingKeys,
  observer: {
    attempt: (queue, o) =>
      post({
        kind: 'attempt',
        queue: queueOf(queue),
        outcome: { delivered: o.delivered, interrupted: o.interrupted, durationMs: o.durationMs },
      }),
    deadLetter: (queue, reason) => post({ kind: 'deadLetter', queue: queueOf(queue), reason }),
  },
  onEmptyQueue: (queue) => post({ kind: 'emptyQueue', queue: queueOf(queue) }),
  ...(data.pollIntervalMs !== undefined && { pollIntervalMs: data.pollIntervalMs }),
});
engine.start();
post({ kind: 'ready' });

port.on('message', (message: ToDeliveryThread) => {
  switch (message.kind) {
    case 'wake':
      engine.notify();
      break;
    case 'expect':
      engine.expect(message.events);
      break;
    case 'config':
      config = message.config;
      logger.level = message.logLevel;
      engine.reload();
      break;
    case 'signingKeys':
      signingKeys = message.keys;
      break;
    case 'written':
      writes.settle(message.batch, { results: message.results });
      break;
    case 'notWritten':
      writes.settle(message.batch, { error: message.error });
      break;
    case 'stop':
      // Closing the port ends the thread once the engine has let go of its sockets and timers.
      void engine
        .stop(message.graceMs)
        .catch((err: unknown) => logger.error({ err }, 'delivery did not stop cleanly'))
        .finally(() => port.close());
      break;
  }
});
