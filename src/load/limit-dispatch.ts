import type { Logger } from '../log/index.js';
import type { ChargingLimits, LimitOutcome, TransactionLimit } from './charging-limits.js';
import {
  acceptedOf,
  answered,
  booted,
  decided,
  failed,
  isDue,
  madeUncontrolled,
  transactionGone,
  UNSENT,
  type ConnectorDispatch,
  type LimitSent,
} from './dispatch-states.js';
import type { StationConnector } from './site-projection.js';
import type { Plan } from './transaction-plan.js';

/** What the load manager does beside dispatch when a limit leaves or comes back. */
export interface DispatchHooks {
  /** A raise leaves for the connector's car (more than its station holds for the same transaction). */
  raising(connectorKey: string, transactionId: number, toA: number): void;
  /** The station answered the limit of `currentA`. */
  answered(connectorKey: string, station: StationConnector, currentA: number, accepted: boolean): void;
  /** A limit never reached its station. */
  lost(connectorKey: string): void;
  /** A limit decided while another was on its way is due now, or a station went flat: step again. */
  stepAgain(): void;
  /** Connectors became uncontrolled: the site is projected again and stepped. */
  uncontrolledChanged(): void;
  /** A station refused a profile that changes over time: its fail-safe goes flat too. */
  flattened(stationId: string): void;
}

export interface LimitDispatchOptions {
  limits: Pick<ChargingLimits, 'setTransactionLimit'>;
  logger: Logger;
  hooks: DispatchHooks;
}

/** A transaction on a managed connector, as its limit names it. */
export interface LimitedTransaction {
  id: number;
  /** The id a 2.0.1 station gave the transaction; null for 1.6. */
  stationTransactionId: string | null;
}

/**
 * Sends the controller's limits to the stations, one in flight per connector (dispatch-states.ts), and keeps what
 * their answers mean: a connector whose station refuses profiles is uncontrolled until it boots (logged once per
 * connection); a station that refuses a profile that changes gets flat ones (docs/design/uplink.md#uplink-what-the-csms-sees).
 */
export class LimitDispatch {
  /** By connector key; absent: unsent. */
  private readonly connectors = new Map<string, ConnectorDispatch>();
  /**
   * Stations that refused a profile that changes: they get the lowest of each throughout until they boot again
   * (StationFailsafes shares the set and clears it at a boot).
   */
  readonly flatStations = new Set<string>();
  /** Profiles whose sending failed (not a station's answer), logged once until one is sent. */
  private readonly failedSends = new Set<string>();
  /**
   * Open transactions whose start the domain has told: their stations have their ids. A step that runs between a
   * start's write and its answer (on a meter reading, another station's answer) sees the transaction already, and a
   * profile naming it would reach the station before the id does and be refused.
   */
  private announcedIds: Set<number> | undefined;

  constructor(private readonly options: LimitDispatchOptions) {}

  /** The connectors whose stations refuse profiles, by connector key. */
  uncontrolled(): Set<string> {
    return new Set([...this.connectors].filter(([, d]) => d.state === 'uncontrolled').map(([key]) => key));
  }

  isUncontrolled(connectorKey: string): boolean {
    return this.connectors.get(connectorKey)?.state === 'uncontrolled';
  }

  private stateOf(connectorKey: string): ConnectorDispatch {
    return this.connectors.get(connectorKey) ?? UNSENT;
  }

  /** The domain told that the transaction's start (or stop) was answered: its station knows its id. */
  announce(transactionId: number): void {
    this.announcedIds?.add(transactionId);
  }

  /**
   * The transactions open at a step, by connector key. At the first step, those open were answered long before (at a
   * start, or a reload that adds circuits); a connector without one holds no limit of ours.
   */
  openNow(open: ReadonlyMap<string, { id: number }>): void {
    const openIds = new Set([...open.values()].map((t) => t.id));
    this.announcedIds ??= openIds;
    for (const id of this.announcedIds) if (!openIds.has(id)) this.announcedIds.delete(id);
    for (const [key, dispatch] of this.connectors) if (!open.has(key)) this.set(key, transactionGone(dispatch));
  }

  /**
   * A step's limit for a transaction: sent when due (isDue) and its start was announced, or kept for when the limit
   * in flight is answered. `changed`: the controller decided a new allowance; `step`: when, and the validity now.
   */
  offer(
    connectorKey: string,
    station: StationConnector,
    transaction: LimitedTransaction,
    plan: Plan,
    changed: boolean,
    step: { atMs: number; validityMs: number },
  ): void {
    if (!this.announcedIds?.has(transaction.id)) return;
    const current = this.stateOf(connectorKey);
    const limit: LimitSent = { transactionId: transaction.id, currentA: plan.currentA, schedule: plan.schedule };
    if (!isDue(current, limit, changed, step.atMs, step.validityMs)) return;
    const { dispatch, send } = decided(current, limit);
    this.set(connectorKey, dispatch);
    if (!send) return;
    const before = acceptedOf(current);
    if (before?.transactionId === transaction.id && plan.currentA > before.currentA)
      this.options.hooks.raising(connectorKey, transaction.id, plan.currentA);
    const sent: TransactionLimit = {
      connectorId: station.connectorId,
      transactionId: transaction.id,
      stationTransactionId: transaction.stationTransactionId,
      currentA: plan.currentA,
      validTo: new Date(plan.from.getTime() + step.validityMs),
      phases: station.phases,
      ...(plan.changes.length > 0 && { changes: { from: plan.from, steps: plan.changes } }),
    };
    void this.options.limits.setTransactionLimit(station.stationId, sent).then(
      (outcome) => this.answered(connectorKey, station, plan, outcome, step),
      (err: unknown) => {
        // Not a station's answer (those are outcomes): a bug of ours, say a profile the schema refuses. The next
        // step sends it again.
        this.set(connectorKey, failed(this.stateOf(connectorKey)));
        this.options.hooks.lost(connectorKey);
        this.notSent(connectorKey, { err, stationId: station.stationId, profile: 'TxProfile' });
      },
    );
  }

  /** The station booted: nothing of ours stands on its connectors, and those it refused are controlled again. */
  booted(connectorKeys: readonly string[]): void {
    for (const key of connectorKeys) this.set(key, booted(this.stateOf(key)));
  }

  /**
   * The station refuses profiles on these connectors: counted as uncontrolled at their maxCurrentA until it boots,
   * logged once.
   */
  markUncontrolled(connectorKeys: readonly string[], stationId: string, outcome: LimitOutcome): void {
    const fresh = connectorKeys.filter((key) => !this.isUncontrolled(key));
    if (fresh.length === 0) return;
    for (const key of fresh) this.set(key, madeUncontrolled(this.stateOf(key)));
    this.options.logger.warn(
      { stationId, connectors: fresh, outcome },
      'station refuses charging profiles: counted as uncontrolled at its maxCurrentA until it boots again',
    );
    this.options.hooks.uncontrolledChanged();
  }

  /** Logged once per profile until one is sent again: a step a second would otherwise log each try. */
  notSent(what: string, fields: object): void {
    if (this.failedSends.has(what)) return;
    this.failedSends.add(what);
    this.options.logger.error(fields, 'charging limit not sent: will try again');
  }

  /** A profile reached its station: a later failure is logged again. */
  reached(what: string): void {
    this.failedSends.delete(what);
  }

  private answered(
    connectorKey: string,
    station: StationConnector,
    plan: Plan,
    outcome: LimitOutcome,
    step: { atMs: number; validityMs: number },
  ): void {
    this.reached(connectorKey);
    const answer = answered(this.stateOf(connectorKey), outcome, step.atMs, step.validityMs);
    this.set(connectorKey, answer.dispatch);
    const { hooks } = this.options;
    hooks.answered(connectorKey, station, plan.currentA, answer.accepted);
    if (answer.refused === 'again') return this.refusedAgain(connectorKey, station.stationId, plan, outcome);
    if (answer.sendNewer) hooks.stepAgain();
  }

  /**
   * A TxProfile refused a second time in a row (or NotSupported): one that changes goes flat (docs/design/uplink.md#uplink-what-the-csms-sees), else the connector is uncontrolled.
   */
  private refusedAgain(connectorKey: string, stationId: string, plan: Plan, outcome: LimitOutcome): void {
    if (outcome === 'rejected' && plan.changes.length > 0) {
      this.flatStations.add(stationId);
      this.options.hooks.flattened(stationId);
      return this.options.hooks.stepAgain();
    }
    this.markUncontrolled([connectorKey], stationId, outcome);
  }

  private set(connectorKey: string, dispatch: ConnectorDispatch): void {
    if (dispatch.state === 'unsent' && dispatch.refusedFor === undefined) this.connectors.delete(connectorKey);
    else this.connectors.set(connectorKey, dispatch);
  }
}
