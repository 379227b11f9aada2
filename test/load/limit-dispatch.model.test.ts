import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { constant, type LimitOutcome, type TransactionLimit } from '../../src/load/index.js';
import { LimitDispatch } from '../../src/load/limit-dispatch.js';
import { connectorKeyOf, type StationConnector } from '../../src/load/site-projection.js';
import { planOf } from '../../src/load/transaction-plan.js';
import { capturedLogger } from '../support/captured-log.js';
import { settled } from './manual-clock.js';

/*
 * LimitDispatch (limit-dispatch.ts over dispatch-states.ts) against the rules it keeps, on random runs of what happens
 * around it: transactions starting (their start answered later) and stopping, the controller deciding new limits,
 * timer steps, stations answering each limit in any order with any outcome, and boots. The stations are played by
 * the test: each limit waits for the answer the run gives it. Steps run as the load manager runs them: on a decision,
 * on a start's answer, on the timer, and when dispatch asks for one.
 */

const STATIONS = ['CP001', 'CP002'] as const;
const VALIDITY_MS = 300_000;
const WINDOW = { fromMs: 0, toMs: VALIDITY_MS };

type Action =
  | { kind: 'start'; station: number }
  | { kind: 'announce'; station: number }
  | { kind: 'stop'; station: number }
  | { kind: 'decide'; station: number; limitA: number }
  | { kind: 'step' }
  | { kind: 'answer'; station: number; outcome: LimitOutcome }
  | { kind: 'boot'; station: number };

const station = fc.integer({ min: 0, max: STATIONS.length - 1 });
/** Weighted so that most runs see limits in flight, answered in every way, decided over while on their way. */
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('start' as const), station }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('announce' as const), station }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stop' as const), station }) },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('decide' as const), station, limitA: fc.constantFrom(0, 6, 10, 16) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('step' as const) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('answer' as const),
      station,
      outcome: fc.constantFrom<LimitOutcome>('accepted', 'accepted', 'rejected', 'notSupported', 'offline', 'timeout'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('boot' as const), station }) },
);

interface Call {
  stationId: string;
  limit: TransactionLimit;
  answer: (outcome: LimitOutcome) => void;
}

/** One connector as the model sees it. */
interface Connector {
  key: string;
  place: StationConnector;
  transactionId?: number;
  announced: boolean;
  limitA: number;
  /** The controller decided limitA since the last step. */
  changed: boolean;
  /** The transaction whose limit the station rejected last, none accepted since. */
  refusedFor?: number;
  uncontrolled: boolean;
}

class World {
  readonly calls: Call[] = [];
  /** Every call made, in order. */
  readonly made: Call[] = [];
  /** Rules a call broke as it left (a throw there would only reject its promise, which dispatch takes as lost). */
  readonly broken: string[] = [];
  private nextTransactionId = 1;
  private atMs = 0;
  readonly connectors: Connector[] = STATIONS.map((stationId) => ({
    key: connectorKeyOf(`${stationId}-A`, 1),
    place: { stationId, connectorId: 1, phases: 3, failsafeA: 6 },
    announced: false,
    limitA: 6,
    changed: false,
    uncontrolled: false,
  }));
  readonly dispatch = new LimitDispatch({
    limits: {
      setTransactionLimit: (stationId, limit) =>
        new Promise((resolve) => {
          const call = { stationId, limit, answer: resolve };
          this.checkCall(call);
          this.calls.push(call);
          this.made.push(call);
        }),
    },
    logger: capturedLogger().logger,
    hooks: {
      raising: () => undefined,
      answered: () => undefined,
      lost: () => undefined,
      stepAgain: () => this.step(),
      uncontrolledChanged: () => this.step(),
      flattened: () => undefined,
    },
  });

  constructor() {
    this.step();
  }

  inFlight(c: Connector): Call[] {
    return this.calls.filter((call) => call.stationId === c.place.stationId);
  }

  /** A load manager's step: what is open, then each open connector's limit offered. */
  step(): void {
    this.atMs += 1000;
    const open = new Map(
      this.connectors.flatMap((c) =>
        c.transactionId === undefined ? [] : [[c.key, { id: c.transactionId }] as const],
      ),
    );
    this.dispatch.openNow(open);
    for (const c of this.connectors) {
      if (c.transactionId === undefined || this.dispatch.isUncontrolled(c.key)) continue;
      const plan = planOf(constant(WINDOW, undefined), c.limitA, false);
      const transaction = { id: c.transactionId, stationTransactionId: null };
      this.dispatch.offer(c.key, c.place, transaction, plan, c.changed, { atMs: this.atMs, validityMs: VALIDITY_MS });
      c.changed = false;
    }
  }

  async run(a: Action): Promise<void> {
    const c = this.connectors[a.kind === 'step' ? 0 : a.station]!;
    switch (a.kind) {
      case 'start':
        if (c.transactionId !== undefined) return;
        c.transactionId = this.nextTransactionId++;
        c.announced = false;
        // A reading's step sees the transaction before its start is answered.
        return this.step();
      case 'announce':
        if (c.transactionId === undefined || c.announced) return;
        c.announced = true;
        this.dispatch.announce(c.transactionId);
        return this.step();
      case 'stop':
        c.transactionId = undefined;
        return this.step();
      case 'decide': {
        const idle = this.inFlight(c).length === 0;
        const before = this.made.length;
        c.limitA = a.limitA;
        c.changed = true;
        this.step();
        // Sent at once when nothing of its own is in flight, whatever the other connector's are doing: a lowering
        // waits behind no other limit and no timer.
        if (idle && c.transactionId !== undefined && c.announced && !c.uncontrolled)
          expect(this.made.slice(before).map((call) => [call.stationId, call.limit.currentA])).toContainEqual([
            c.place.stationId,
            a.limitA,
          ]);
        return;
      }
      case 'step':
        return this.step();
      case 'answer': {
        const call = this.inFlight(c)[0];
        if (!call) return;
        this.calls.splice(this.calls.indexOf(call), 1);
        const current = call.limit.transactionId === c.transactionId;
        const { transactionId } = call.limit;
        // Twice in a row for one transaction, also across a boot or after its stop: it was open when each was sent.
        const refusedTwice = a.outcome === 'rejected' && c.refusedFor === transactionId;
        if (a.outcome === 'accepted' || a.outcome === 'notSupported' || refusedTwice) delete c.refusedFor;
        else if (a.outcome === 'rejected') c.refusedFor = transactionId;
        const before = this.made.length;
        call.answer(a.outcome);
        await settled();
        // NotSupported says the station takes no profile at all, also when it answers for a transaction just ended.
        if (refusedTwice || a.outcome === 'notSupported') c.uncontrolled = true;
        expect(this.dispatch.isUncontrolled(c.key), 'a second refusal, or NotSupported, then uncontrolled').toBe(
          c.uncontrolled,
        );
        // A newer limit decided while this one was on its way is sent as soon as it is answered.
        const newer = current && c.announced && c.limitA !== call.limit.currentA;
        if (newer && !c.uncontrolled && a.outcome !== 'rejected')
          expect(this.made.slice(before).map((s) => s.limit.currentA)).toContain(c.limitA);
        return;
      }
      case 'boot':
        c.uncontrolled = false;
        this.dispatch.booted([c.key]);
        return this.step();
    }
  }

  /** The rules every limit leaving keeps. */
  private checkCall(call: Omit<Call, 'answer'>): void {
    const c = this.connectors.find((k) => k.place.stationId === call.stationId)!;
    const rules: Array<[string, boolean]> = [
      ['at most one limit in flight per connector', this.inFlight(c).length === 0],
      ['nothing sent to an uncontrolled connector', !c.uncontrolled],
      ['only the open transaction', call.limit.transactionId === c.transactionId],
      ["nothing before the transaction's start is answered", c.announced],
    ];
    for (const [rule, kept] of rules) if (!kept) this.broken.push(`${call.stationId}: ${rule}`);
  }
}

describe('limit dispatch (model)', () => {
  it('one limit in flight per connector, the newest sent once it is answered, refused twice then uncontrolled, nothing before the start is answered', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 80, size: 'max' }), async (actions) => {
        const world = new World();
        for (const a of actions) {
          await world.run(a);
          expect(world.broken).toEqual([]);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
