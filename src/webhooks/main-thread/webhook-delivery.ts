// Main thread: the daemon's (or a CLI command's) side of delivery; the delivery thread never loads it.
import { Worker } from 'node:worker_threads';
import type { Registry } from 'prom-client';
import type { Config } from '../../config/index.js';
import { worstLevel, type HealthLevel, type HealthSource } from '../../health/index.js';
import { messageOf, type Logger } from '../../log/index.js';
import { DeliveryStore, queueId, type AppendedRecord, type QueueKey } from '../../outbox/index.js';
import type { Database, GroupCommit } from '../../store/index.js';
import { DeliveryMetrics } from './delivery-metrics.js';
import type { DeliveryThreadData, FromDeliveryThread, ToDeliveryThread } from '../delivery-thread-messages.js';
import { applyDeliveryWrites, type DeliveryWrite } from '../delivery-writes.js';
import { ExecutorStatsStore } from './executor-stats.js';
import { executorStatuses, type ExecutorStatus } from './executor-status.js';
import type { WebhookSigningKeys } from '../request-signature.js';

export interface WebhookDeliveryOptions {
  /** Where the outbox lives; the delivery thread opens its own connection to it. */
  dataDir: string;
  /** The daemon's connection: health and metrics read the outbox through it, and the thread's writes go through it. */
  db: Database;
  /** The daemon's group commit on that connection: the thread's writes share the stations' commits. */
  group: GroupCommit;
  /** Read on every use; call reload() to hand a new config to the delivery thread. */
  config: () => Config;
  logger: Logger;
  /** Where the delivery thread's log lines (already formatted) go: the daemon's log destination (lineWriter). */
  writeLogLine: (line: string) => void;
  /** The keystore's current webhook keys; a change (rotation) is passed to the thread within KEY_CHECK_MS. */
  signingKeys: () => WebhookSigningKeys;
  metrics: Registry;
  /** Safety-net poll for rows no notify() announced (another process, a missed wake). */
  pollIntervalMs?: number;
}

/** How long a stopping daemon lets in-flight requests finish before aborting them. */
const STOP_GRACE_MS = 5000;
/** After the grace, how long the thread has to record its outcomes and close before it is terminated. */
const STOP_MARGIN_MS = 5000;
const RESTART_DELAY_MS = 1000;
const KEY_CHECK_MS = 1000;
/** After an unexpected end of the thread, health says `warning` this long: a thread that keeps dying shows. */
const RECENT_RESTART_MS = 10 * 60_000;
/**
 * Outcomes held for a later commit (GroupCommit.writeHeld) are written at once past this many: until then their rows
 * still read as pending, and the thread reads past them at each look at its queue.
 */
const MAX_HELD_WRITES = 128;
/** The thread's writes nobody waits for (outcomes and statistics): they may wait to share a later commit. */
const MAY_WAIT: ReadonlySet<DeliveryWrite['op']> = new Set(['delivered', 'failed', 'dequeued', 'requested']);

/** What GET /health says about the delivery thread: whether events can leave the outbox at all. */
export interface DeliveryThreadHealth {
  deliveryThread: 'running' | 'restarting' | 'not needed';
  threadRestarts: number;
  lastThreadExitAt?: string;
}

/**
 * Webhook delivery, seen from the daemon. The DeliveryEngine runs on its own thread (delivery-thread.ts): signing
 * and sending keep their pace while stations keep the main thread busy. This side wakes it after commits, passes
 * config reloads and key rotations, counts its attempts in Prometheus, reports health from the outbox, and restarts
 * the thread if it ever dies: the events wait in the outbox meanwhile.
 */
export class WebhookDelivery {
  private readonly options: WebhookDeliveryOptions;
  private readonly deliveries: DeliveryStore;
  private readonly stats: ExecutorStatsStore;
  private readonly metrics: DeliveryMetrics;
  private thread: Worker | undefined;
  private sentKeys: WebhookSigningKeys | undefined;
  private started = false;
  private wakeScheduled = false;
  /** Events of the open group not yet passed to the thread (expect()). */
  private expected: AppendedRecord[] = [];
  /**
   * Queues whose worker found them empty: the next event's commit counts its first attempt for it
   * (countsFirstAttempt()).
   */
  private readonly emptyQueues = new Set<string>();
  /** The thread's writes held for a later commit, not committed yet. */
  private heldWrites = 0;
  private restarts = 0;
  private lastExitAt: Date | undefined;
  private timers: NodeJS.Timeout[] = [];
  private readonly running: Promise<void>;
  private markRunning!: { resolve: () => void; reject: (err: unknown) => void };

  constructor(options: WebhookDeliveryOptions) {
    this.options = options;
    this.deliveries = new DeliveryStore(options.db);
    this.stats = new ExecutorStatsStore(options.db);
    this.metrics = new DeliveryMetrics(options.metrics, () => this.statuses());
    this.running = new Promise((resolve, reject) => (this.markRunning = { resolve, reject }));
    this.running.catch(() => undefined);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.spawnIfNeeded();
    const keyCheck = setInterval(() => this.passSigningKeys(), KEY_CHECK_MS);
    keyCheck.unref();
    this.timers.push(keyCheck);
  }

  /**
   * Resolves once the first thread has started its queue workers (at once without webhooks); rejects if it fails before
   * that.
   */
  ready(): Promise<void> {
    return this.running;
  }

  /**
   * Events were committed: wake the thread. Coalesced: the commit's announcements all run before the queued
   * microtask, so a group of events costs one message, sent without waiting for the next turn of the loop.
   */
  notify(): void {
    if (!this.started || this.wakeScheduled) return;
    this.wakeScheduled = true;
    queueMicrotask(() => {
      this.wakeScheduled = false;
      this.send({ kind: 'wake' });
    });
  }

  /**
   * Events are about to commit: the thread may sign their requests meanwhile and takes up the rows counted for it
   * (DeliveryEngine.expect). Passed in one message per group commit, just before its COMMIT, so the signing runs
   * beside its fsync: one message per event cost the main thread 6 % of its time under station load (issue 47).
   */
  expect(events: readonly AppendedRecord[]): void {
    if (!this.thread) return;
    const first = this.expected.length === 0;
    this.expected.push(...events);
    if (first)
      this.options.group.beforeCommit(() => {
        const expected = this.expected;
        this.expected = [];
        this.send({ kind: 'expect', events: expected });
      });
  }

  /**
   * Whether the commit of an event counts the first attempt of its delivery to this queue: once per time its worker
   * found it empty, so the worker sends that row without a round trip through this thread's commit to count it.
   */
  countsFirstAttempt(queue: QueueKey): boolean {
    return this.thread !== undefined && this.emptyQueues.delete(queueId(queue));
  }

  /** Hands the current config (and its log level) to the thread, which starts and stops queue workers to match it. */
  reload(): void {
    const config = this.options.config();
    // A worker stopped by the reload would not take up a row counted for it (it would be counted again: one too many).
    this.emptyQueues.clear();
    if (this.thread) this.send({ kind: 'config', config, logLevel: config.log.level });
    else this.spawnIfNeeded();
  }

  /** Lets in-flight requests finish within graceMs, waits for every outcome to be recorded, ends the thread. */
  async stop(graceMs = STOP_GRACE_MS): Promise<void> {
    this.started = false;
    // The thread waits for its outcomes to be recorded before it ends: from now on they are written at once.
    this.options.group.flushHeld();
    for (const timer of this.timers) clearTimeout(timer);
    const thread = this.thread;
    this.thread = undefined;
    if (!thread) return;
    const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    const deadline = setTimeout(() => {
      this.options.logger.error({ graceMs }, 'webhook delivery thread did not stop in time; terminated');
      void thread.terminate();
    }, graceMs + STOP_MARGIN_MS);
    thread.postMessage({ kind: 'stop', graceMs } satisfies ToDeliveryThread);
    await exited;
    clearTimeout(deadline);
  }

  statuses(): ExecutorStatus[] {
    return executorStatuses(this.options.config(), this.deliveries, this.stats);
  }

  /** GET /health `webhooks`: per executor its metrics and level (docs/operating/index.md#operating), worst level on top. */
  healthSource(): HealthSource {
    return {
      name: 'webhooks',
      report: () => {
        const executors = this.statuses();
        const thread = this.threadHealth();
        return {
          status: worstLevel([...executors.map((e) => e.status), threadLevel(thread)]),
          ...thread,
          deadLetters: this.deliveries.deadLetterCount(),
          executors,
        };
      },
    };
  }

  private threadHealth(): DeliveryThreadHealth {
    // Started, wanted and without a thread: it ended and waits for its restart.
    const deliveryThread = this.thread ? 'running' : this.started && this.needed() ? 'restarting' : 'not needed';
    return {
      deliveryThread,
      threadRestarts: this.restarts,
      ...(this.lastExitAt && { lastThreadExitAt: this.lastExitAt.toISOString() }),
    };
  }

  /** A site without an enabled webhook has nothing to deliver: no thread (and its memory) until a reload adds one. */
  private spawnIfNeeded(): void {
    if (!this.started || this.thread) return;
    if (this.needed()) this.spawn();
    else this.markRunning.resolve();
  }

  /** Whether any site has an enabled webhook, so a thread must run. */
  private needed(): boolean {
    return this.options.config().sites.some((site) => site.webhooks.some((w) => w.enabled));
  }

  private spawn(): void {
    const { dataDir, config, logger, signingKeys, pollIntervalMs } = this.options;
    this.sentKeys = signingKeys();
    const data: DeliveryThreadData = {
      dataDir,
      config: config(),
      logLevel: logger.level,
      signingKeys: this.sentKeys,
      ...(pollIntervalMs !== undefined && { pollIntervalMs }),
    };
    const thread = startDeliveryThread(data);
    this.thread = thread;
    this.emptyQueues.clear();
    thread.on('message', (message: FromDeliveryThread) => this.receive(message, thread));
    thread.on('error', (err) => {
      logger.error({ err }, 'webhook delivery thread failed');
      this.markRunning.reject(err);
    });
    thread.on('exit', (code) => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      this.restarts += 1;
      this.lastExitAt = new Date();
      // The next thread reads the queues from the outbox: what this one delivered should read so by then.
      this.options.group.flushHeld();
      logger.error(
        { exitCode: code, restartInMs: RESTART_DELAY_MS },
        'webhook delivery thread ended unexpectedly; restarting it, pending events stay in the outbox',
      );
      const restart = setTimeout(() => this.spawnIfNeeded(), RESTART_DELAY_MS);
      this.timers.push(restart);
    });
  }

  private receive(message: FromDeliveryThread, thread: Worker): void {
    switch (message.kind) {
      case 'write':
        this.record(message.batch, message.writes, thread);
        break;
      case 'ready':
        this.markRunning.resolve();
        break;
      case 'log':
        this.options.writeLogLine(message.line);
        break;
      case 'attempt':
        this.metrics.attempt(message.queue, message.outcome);
        break;
      case 'deadLetter':
        this.metrics.deadLetter(message.queue, message.reason);
        break;
      case 'emptyQueue':
        this.emptyQueues.add(queueId(message.queue));
        break;
    }
  }

  /**
   * Applies a batch of the thread's writes in the current group commit (unsynced: bookkeeping) and tells the thread
   * once it committed. A batch of outcomes only is held for the next commit, a station's most often (docs/operating/flash-wear.md#what-the-daemon-writes-flash-wear); one with a write the thread waits for (an attempt counted) goes at once, after them.
   */
  private record(batch: number, writes: DeliveryWrite[], thread: Worker): void {
    const reply = (message: ToDeliveryThread) => thread.postMessage(message);
    const refuse = (err: unknown) => {
      this.options.logger.error({ err, writes: writes.length }, 'could not record webhook delivery outcomes');
      reply({ kind: 'notWritten', batch, error: messageOf(err) });
    };
    const { group } = this.options;
    if (this.started && writes.every((w) => MAY_WAIT.has(w.op))) {
      let held: boolean[] = [];
      this.heldWrites += writes.length;
      group
        .writeHeld(() => (held = applyDeliveryWrites(this.deliveries, this.stats, writes)))
        .finally(() => (this.heldWrites -= writes.length))
        .then(() => reply({ kind: 'written', batch, results: held }), refuse);
      if (this.heldWrites >= MAX_HELD_WRITES) group.flushHeld();
      return;
    }
    let results: boolean[];
    try {
      results = group.writeUnsynced(() => applyDeliveryWrites(this.deliveries, this.stats, writes));
    } catch (err) {
      refuse(err);
      return;
    }
    group.committed().then(() => reply({ kind: 'written', batch, results }), refuse);
  }

  private passSigningKeys(): void {
    try {
      const keys = this.options.signingKeys();
      // The keystore hands out fresh objects each time; the keys inside change only on a rotation.
      if (
        keys.rsa.privateKey === this.sentKeys?.rsa.privateKey &&
        keys.ed25519.privateKey === this.sentKeys.ed25519.privateKey
      )
        return;
      this.sentKeys = keys;
      this.send({ kind: 'signingKeys', keys });
    } catch (err) {
      this.options.logger.error({ err }, 'could not read the webhook signing keys; the thread keeps the previous ones');
    }
  }

  private send(message: ToDeliveryThread): void {
    this.thread?.postMessage(message);
  }
}

/** Critical while no thread delivers (events wait in the outbox), warning for a while after it had to be restarted. */
export function threadLevel(health: DeliveryThreadHealth, now = Date.now()): HealthLevel {
  if (health.deliveryThread === 'restarting') return 'critical';
  if (health.lastThreadExitAt && now - Date.parse(health.lastThreadExitAt) < RECENT_RESTART_MS) return 'warning';
  return 'ok';
}

/**
 * The thread runs the compiled delivery-thread/delivery-thread.js. Run from the TypeScript sources (tests, tsx),
 * the thread first registers tsx, the loader the parent process was started with.
 */
function startDeliveryThread(workerData: DeliveryThreadData): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('../delivery-thread/delivery-thread.js', here), { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const script = new URL('../delivery-thread/delivery-thread.ts', here).href;
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(script)}); });`,
    { eval: true, workerData },
  );
}
