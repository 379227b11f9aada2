import fc from 'fast-check';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { parseConfig, type Config } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { appendEvent, DeliveryStore, type AppendedRecord, type PendingDelivery } from '../../src/outbox/index.js';
import { openDatabase, type Database } from '../../src/store/index.js';
import { applyDeliveryWrites, type DeliveryWrite } from '../../src/webhooks/delivery-writes.js';
import { ExecutorStatsStore } from '../../src/webhooks/main-thread/executor-stats.js';
import { QueueWorker } from '../../src/webhooks/delivery-thread/queue-worker.js';
import type { AttemptOutcome, PreparedRequest } from '../../src/webhooks/webhook-sender.js';
import { WriteBatch } from '../../src/webhooks/delivery-thread/write-batch.js';
import { tempSite, type TempSite } from '../support/temp-site.js';

/**
 * QueueWorker against a model of what delivery promises, on random runs of what can happen around it: events
 * appended in changes that commit or are undone, told to the worker before their commit (or never), with their
 * first attempt counted for a worker that said its queue was empty; the daemon answering or refusing the worker's
 * writes late; requests delivered, failing or interrupted; wakes, clock ticks, restarts, disable and enable.
 * The worker is real, on a real outbox (its own read-only connection, as on the delivery thread), the daemon's side
 * applies its writes with the code the daemon uses, the sender records each request where it would leave.
 */
const queue = { siteId: 's1', webhookId: 'w1', eventType: 'Authorize' as const };
const RETRY_MS = 10_000;
const IDLE_POLL_MS = 60_000;
const MAX_RETRIES = 2;
const OUTCOME_LINGER_MS = 20;

function configWith(enabled: boolean): Config {
  return parseConfig(`
sites:
  - id: s1
    webhooks: [{ id: w1, url: "http://127.0.0.1:9/w1", enabled: ${enabled}, events: [Authorize] }]
webhookDelivery: { retryIntervalS: ${RETRY_MS / 1000}, maxRetries: ${MAX_RETRIES} }
`);
}

/** Gives the event loop real turns (setImmediate is not faked) after moving the fake clock by ms. */
async function advance(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
}

type Outcome = 'delivered' | 'failed' | 'interrupted';

interface Sent {
  rowId: number;
  resolve: (outcome: Partial<AttemptOutcome>) => void;
}

/** A request as the recording sender signs it: which event it carries is what matters here. */
type SignedRequest = PreparedRequest & { eventId: string };

/** The delivery thread's WriteBatch, showing the rules each write as the worker makes it. */
class ObservedWriteBatch extends WriteBatch {
  constructor(
    send: (batch: number, writes: DeliveryWrite[]) => void,
    private readonly observe: (writes: readonly DeliveryWrite[]) => void,
  ) {
    super(send, OUTCOME_LINGER_MS);
  }

  override run(writes: readonly DeliveryWrite[]): Promise<boolean[]> {
    this.observe(writes);
    return super.run(writes);
  }

  override queue(write: DeliveryWrite): Promise<void> {
    this.observe([write]);
    return super.queue(write);
  }
}

/** The worker with everything around it, and what the model's rules are checked against. */
class World {
  readonly temp: TempSite = tempSite();
  /** The daemon's connection: changes and the worker's writes. */
  readonly db: Database = openDatabase(this.temp.dataDir);
  /** The delivery thread's connection: it sees only what committed. */
  readonly reader: Database = openDatabase(this.temp.dataDir, { readonly: true });
  private readonly daemonStore = new DeliveryStore(this.db);
  private readonly stats = new ExecutorStatsStore(this.db);
  readonly writes = new ObservedWriteBatch(
    (batch, writes) => this.receive(batch, writes),
    (writes) => this.observe(writes),
  );
  config = configWith(true);
  worker: QueueWorker | undefined;
  private retiring: Promise<void> = Promise.resolve();

  /** Batches sent by the worker that the daemon has not answered. */
  readonly inbox: Array<{ batch: number; writes: DeliveryWrite[] }> = [];
  /** The daemon is slow: it answers the worker's batches only when it catches up. */
  slow = false;
  /** A change is being written (its transaction open): the daemon applies the worker's writes after it. */
  changeOpen = false;
  /** The rows of that change. */
  private changeRows: Array<{ id: number; eventId: string }> = [];
  /** The daemon's word that the worker found its queue empty: the next event's commit counts its first attempt. */
  emptySaid = false;
  /** At the end of a run: the daemon answers at once and every request is delivered. */
  draining = false;
  readonly inFlight: Sent[] = [];

  // What happened, for the rules.
  readonly committedRows = new Map<number, string>();
  /** Rows the worker is done with: a delivered answer came, or it wrote them to the dead letters. */
  readonly resolved = new Set<number>();
  readonly sends = new Map<number, number>();
  disabled = false;
  readonly violations: string[] = [];

  constructor() {
    this.startWorker();
  }

  private startWorker(): void {
    const worker = new QueueWorker({
      queue,
      deliveries: new DeliveryStore(this.reader),
      writes: this.writes,
      config: () => this.config,
      logger: createLogger('silent'),
      observer: { attempt: () => undefined, deadLetter: () => undefined },
      now: () => Date.now(),
      idlePollMs: IDLE_POLL_MS,
      onEmpty: () => (this.emptySaid = true),
      sender: {
        prepare: async (_webhook, event) => ({
          eventId: event.eventId,
          requestId: event.eventId,
          body: '',
          headers: [],
          preparedAt: Date.now(),
          url: this.config.sites[0]!.webhooks[0]!.url,
          signature: { profile: 'documented', alg: 'rsa-pss-sha256' },
          timeZone: this.config.timezone,
          keyId: 'k',
        }),
        send: (_webhook, event, options) =>
          this.send(event as PendingDelivery, options.signal!, options.prepared as Promise<SignedRequest> | undefined),
      },
    });
    worker.start(this.retiring);
    this.worker = worker;
  }

  /** A daemon restart or a reload that stops the worker: the next one starts once it has finished. */
  restart(graceMs: number, reason: string, startNext: boolean): void {
    const stopped = this.worker!.stop(graceMs, reason);
    this.retiring = Promise.all([this.retiring, stopped]).then(() => undefined);
    this.worker = undefined;
    // The daemon forgets which queues were empty on a reload and with a new thread.
    this.emptySaid = false;
    if (startNext) this.startWorker();
  }

  enable(enabled: boolean): void {
    this.config = configWith(enabled);
    this.disabled = !enabled;
    if (enabled) this.startWorker();
    else this.restart(0, 'webhook disabled, removed or unsubscribed', false);
  }

  /**
   * Appends one event in the open change (opening one); returns what the domain tells delivery of it, if it has a row.
   */
  append(askToCount: boolean): AppendedRecord | undefined {
    if (!this.changeOpen) {
      this.db.exec('BEGIN IMMEDIATE');
      this.changeOpen = true;
    }
    const counted = askToCount && this.emptySaid;
    if (counted) this.emptySaid = false;
    const event = appendEvent(
      this.db,
      { eventType: 'Authorize', siteId: 's1', payload: { idTag: 'T' } },
      this.disabled ? [] : ['w1'],
      new Date(),
      {
        countFirstAttempt: () => counted,
      },
    );
    if (this.disabled) return undefined;
    const id = this.db
      .prepare<[number], number>('SELECT id FROM deliveries WHERE event_seq = ?')
      .pluck()
      .get(event.seq)!;
    this.changeRows.push({ id, eventId: event.eventId });
    return event;
  }

  endChange(commit: boolean): void {
    if (!this.changeOpen) return;
    this.db.exec(commit ? 'COMMIT' : 'ROLLBACK');
    this.changeOpen = false;
    if (commit) for (const row of this.changeRows) this.committedRows.set(row.id, row.eventId);
    this.changeRows = [];
    if (!this.slow) this.answerAll();
  }

  /** The daemon catches up: it applies every batch waiting, unless a change holds the database. */
  answerAll(): void {
    while (this.answer(false));
  }

  /** The daemon applies (or refuses) the oldest batch; false if none waits or a change holds the database. */
  answer(refuse: boolean): boolean {
    const sent = this.inbox.shift();
    if (!sent || this.changeOpen) {
      if (sent) this.inbox.unshift(sent);
      return false;
    }
    if (refuse) {
      queueMicrotask(() => this.writes.settle(sent.batch, { error: 'database or disk is full' }));
      return true;
    }
    const results = this.db.transaction(() => applyDeliveryWrites(this.daemonStore, this.stats, sent.writes))();
    queueMicrotask(() => this.writes.settle(sent.batch, { results }));
    return true;
  }

  outcome(outcome: Outcome): boolean {
    const sent = this.inFlight.shift();
    if (!sent) return false;
    if (outcome === 'delivered') this.resolved.add(sent.rowId);
    sent.resolve(
      outcome === 'delivered'
        ? { delivered: true, status: 204 }
        : outcome === 'failed'
          ? { status: 500, error: 'HTTP 500' }
          : { interrupted: true, error: 'interrupted' },
    );
    return true;
  }

  /** Runs until every committed row has left the queue, with the daemon and the receiver answering at once. */
  async drain(): Promise<void> {
    this.endChange(true);
    if (this.disabled) this.enable(true);
    this.draining = true;
    this.slow = false;
    for (let round = 0; round < 40 && !this.drained(); round++) {
      this.answerAll();
      while (this.outcome('delivered'));
      await advance(round === 0 ? 0 : IDLE_POLL_MS);
    }
  }

  private drained(): boolean {
    return this.inbox.length === 0 && this.inFlight.length === 0 && this.pendingRows().length === 0;
  }

  pendingRows(): number[] {
    return this.reader
      .prepare<[], number>("SELECT id FROM deliveries WHERE state = 'pending' ORDER BY id")
      .pluck()
      .all();
  }

  rowStates(): Array<{ id: number; state: string; attempts: number }> {
    return this.reader
      .prepare<[], { id: number; state: string; attempts: number }>(
        'SELECT id, state, attempts FROM deliveries ORDER BY id',
      )
      .all();
  }

  async close(): Promise<void> {
    this.draining = true;
    const stopping = this.worker?.stop(0, 'test over');
    this.slow = false;
    for (let round = 0; round < 10; round++) {
      this.answerAll();
      await advance(OUTCOME_LINGER_MS);
    }
    await stopping;
    await this.retiring;
    this.reader.close();
    this.db.close();
    this.temp.cleanup();
  }

  private receive(batch: number, writes: DeliveryWrite[]): void {
    this.inbox.push({ batch, writes });
    if (!this.slow) this.answerAll();
  }

  private observe(writes: readonly DeliveryWrite[]): void {
    for (const write of writes) if (write.op === 'dead') this.resolved.add(write.id);
  }

  /** The request leaves here, unless its signal was aborted first: each rule is checked at that moment. */
  private async send(
    row: PendingDelivery,
    signal: AbortSignal,
    prepared: Promise<SignedRequest> | undefined,
  ): Promise<AttemptOutcome> {
    const startedAt = Date.now();
    const signed = await prepared?.catch(() => undefined);
    const result = (outcome: Partial<AttemptOutcome>): AttemptOutcome => ({
      delivered: false,
      responseBody: '',
      requestId: 'r',
      startedAt,
      durationMs: 0,
      interrupted: false,
      ...outcome,
    });
    if (signal.aborted) return result({ interrupted: true, error: 'interrupted' });
    const sends = (this.sends.get(row.id) ?? 0) + 1;
    this.sends.set(row.id, sends);
    const attempts = this.reader
      .prepare<[number], number>('SELECT attempts FROM deliveries WHERE id = ?')
      .pluck()
      .get(row.id);
    const problems = [
      this.committedRows.get(row.id) !== row.eventId && 'sent before its event was read committed',
      this.disabled && 'sent while the webhook is disabled',
      (attempts ?? 0) < sends && `sent ${sends} times with ${attempts} attempts counted`,
      signed && signed.eventId !== row.eventId && 'sent with the request signed for another event',
      this.inFlight.length > 0 && 'sent while another request of the queue was in flight',
      ...[...this.committedRows.keys()]
        .filter((id) => id < row.id && !this.resolved.has(id))
        .map((id) => `sent ahead of row ${id}, which is not done`),
    ].filter((p): p is string => typeof p === 'string');
    this.violations.push(...problems.map((p) => `row ${row.id}: ${p}`));
    if (this.draining) {
      this.resolved.add(row.id);
      return result({ delivered: true, status: 204 });
    }
    return new Promise((resolve) => {
      const sent: Sent = { rowId: row.id, resolve: (outcome) => resolve(result(outcome)) };
      this.inFlight.push(sent);
      signal.addEventListener('abort', () => {
        const at = this.inFlight.indexOf(sent);
        if (at < 0) return;
        this.inFlight.splice(at, 1);
        sent.resolve({ interrupted: true, error: 'interrupted' });
      });
    });
  }
}

/** What the model keeps: the words of events still on their way to the worker, and whether the webhook is enabled. */
interface Model {
  words: AppendedRecord[];
  disabled: boolean;
}

type Command = fc.AsyncCommand<Model, World>;

const command = (
  name: string,
  check: (m: Readonly<Model>) => boolean,
  act: (m: Model, w: World) => void | Promise<void>,
): Command => ({
  check,
  async run(m, w) {
    await act(m, w);
    await advance(0);
    expect(w.violations).toEqual([]);
  },
  toString: () => name,
});

/** What can happen around the worker, weighted towards the steps of an event's way (the rarer faults less often). */
const commands = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.boolean().map((askToCount) =>
      command(
        `append(${askToCount ? 'counted if said empty' : 'not counted'})`,
        () => true,
        (m, w) => {
          const event = w.append(askToCount);
          if (event) m.words.push(event);
        },
      ),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.boolean().map((wake) =>
      command(
        wake ? 'commit, wake' : 'commit (its wake still on its way)',
        () => true,
        (_m, w) => {
          w.endChange(true);
          if (wake) w.worker?.wake();
        },
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant(
      command(
        'roll back',
        () => true,
        (_m, w) => w.endChange(false),
      ),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constant(
      command(
        'tell',
        (m) => m.words.length > 0,
        (m, w) => {
          const event = m.words.shift()!;
          w.worker?.expect(event, event.counted[0]?.id);
        },
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant(
      command(
        'drop word',
        (m) => m.words.length > 0,
        (m) => void m.words.shift(),
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant(
      command(
        'daemon slow',
        () => true,
        (_m, w) => void (w.slow = true),
      ),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constant(
      command(
        'daemon catches up',
        () => true,
        (_m, w) => {
          w.slow = false;
          w.answerAll();
        },
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant(
      command(
        'daemon refuses a batch',
        () => true,
        (_m, w) => void w.answer(true),
      ),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constant(
      command(
        'delivered',
        () => true,
        (_m, w) => void w.outcome('delivered'),
      ),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Outcome>('failed', 'interrupted').map((outcome) =>
      command(
        outcome,
        () => true,
        (_m, w) => void w.outcome(outcome),
      ),
    ),
  },
  {
    weight: 3,
    arbitrary: fc.constant(
      command(
        'wake',
        () => true,
        (_m, w) => w.worker?.wake(),
      ),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(1, OUTCOME_LINGER_MS, RETRY_MS, IDLE_POLL_MS).map((ms) =>
      command(
        `tick ${ms} ms`,
        () => true,
        () => advance(ms),
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(0, 50).map((graceMs) =>
      command(
        `restart (grace ${graceMs} ms)`,
        (m) => !m.disabled,
        (_m, w) => w.restart(graceMs, 'daemon stopping', true),
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.boolean().map((enable) =>
      command(
        enable ? 'enable' : 'disable',
        (m) => m.disabled === enable,
        (m, w) => {
          m.disabled = !enable;
          w.enable(enable);
        },
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constant(
      command(
        'disable as the daemon answers',
        (m) => !m.disabled,
        (m, w) => {
          m.disabled = true;
          w.enable(false);
          w.slow = false;
          w.answerAll();
        },
      ),
    ),
  },
);

describe('QueueWorker against its model (fast-check, fake timers, real outbox)', () => {
  it('never sends before read committed, never more often than counted, loses nothing, keeps FIFO, sends nothing while disabled', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-25T08:00:00.000Z'), toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    await fc.assert(
      fc.asyncProperty(fc.commands([commands], { maxCommands: 40, size: 'large' }), async (run) => {
        const world = new World();
        try {
          await fc.asyncModelRun(() => ({ model: { words: [], disabled: false }, real: world }), run);
          await world.drain();
          expect(world.violations).toEqual([]);
          expect(world.pendingRows()).toEqual([]);
          const rows = world.rowStates();
          expect(rows.map((r) => r.id).sort()).toEqual([...world.committedRows.keys()].sort());
          for (const row of rows) {
            expect(row.attempts).toBeGreaterThanOrEqual(world.sends.get(row.id) ?? 0);
            if (row.state === 'delivered') expect(world.resolved.has(row.id)).toBe(true);
          }
        } finally {
          await world.close();
        }
      }),
      { seed: 2811, numRuns: 100 },
    );
    // ~3 s on a quiet box, 13 s beside other test files at load 8: twice the suite's 30 s default for a loaded CI box.
  }, 60_000);
});
