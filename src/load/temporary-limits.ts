import { z } from 'zod';
import type { CircuitConfig, Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { bumpChangeCounter, readChangeCounter, statement, type Database, type Writer } from '../store/index.js';

/**
 * Temporary circuit limits (docs/configuration/circuits.md#circuits-load-management, temporary limits): a grid operator's dimming order
 * or a demand-response event lowers a circuit until an instant. Kept in the database, so one survives a restart
 * until its end; set through the API or the CLI, which bumps a change counter the daemon polls.
 */

/** The change counter the CLI bumps after writing a limit: the daemon re-reads them within ocpp.changePollMs. */
export const TEMPORARY_LIMITS_TOPIC = 'circuit-temporary-limits';

/** Per phase, as a circuit's configured maxCurrentA: a typo of a few zeros is refused, any real order is not. */
export const MAX_TEMPORARY_LIMIT_A = 10_000;
/** An OCPP limit is sent to a tenth of an ampere: anything finer could not reach a station. */
export const TEMPORARY_LIMIT_STEP_A = 0.1;
/** How far ahead `until` may be (docs/operating/security.md#security): a grid operator's order is for days or months, not centuries. */
export const MAX_TEMPORARY_LIMIT_DAYS = 366;

/** A circuit's temporary limit: per phase, until an instant (wall-clock time: a grid operator's order names one). */
export interface TemporaryLimit {
  circuitId: string;
  siteId: string;
  maxCurrentA: number;
  until: Date;
  setAt: Date;
  /** Who set it: `api:<clientId>` or `cli`. */
  setBy: string;
}

/** What the load manager needs of the limits: those in force at an instant, and a word when they change. */
export interface TemporaryLimitSource {
  /** The limits in force at `at` (until after it), by circuit id. */
  active(at: Date): ReadonlyMap<string, TemporaryLimit>;
  /** Returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

/** A circuit of the config and its site: circuit ids are unique across sites (the config refuses two). */
export interface ConfiguredCircuit {
  siteId: string;
  circuit: CircuitConfig;
}

export function findCircuit(config: Config, circuitId: string): ConfiguredCircuit | undefined {
  for (const site of config.sites) {
    const circuit = site.circuits.find((c) => c.id === circuitId);
    if (circuit) return { siteId: site.id, circuit };
  }
  return undefined;
}

/**
 * What a circuit may carry now: its configured maxCurrentA, or a temporary limit below it. A temporary limit only
 * lowers a circuit: one above the configured limit changes nothing.
 */
export function effectiveMaxCurrentA(
  configuredA: number,
  limit: Pick<TemporaryLimit, 'maxCurrentA'> | undefined,
): number {
  return limit === undefined ? configuredA : Math.min(configuredA, limit.maxCurrentA);
}

/** A circuit's limits as the API and `load limit` show them, times written by `formatTime`. */
export interface CircuitLimitState {
  siteId: string;
  circuitId: string;
  configuredMaxCurrentA: number;
  temporaryLimit: { maxCurrentA: number; until: string; setAt: string; setBy: string } | null;
  effectiveMaxCurrentA: number;
}

export function circuitLimitState(
  found: ConfiguredCircuit,
  limit: TemporaryLimit | undefined,
  formatTime: (at: Date) => string,
): CircuitLimitState {
  const configuredA = found.circuit.maxCurrentA;
  return {
    siteId: found.siteId,
    circuitId: found.circuit.id,
    configuredMaxCurrentA: configuredA,
    temporaryLimit: limit
      ? {
          maxCurrentA: limit.maxCurrentA,
          until: formatTime(limit.until),
          setAt: formatTime(limit.setAt),
          setBy: limit.setBy,
        }
      : null,
    effectiveMaxCurrentA: effectiveMaxCurrentA(configuredA, limit),
  };
}

/** Why a requested maxCurrentA is refused (undefined: it is not). The API and the CLI share the words. */
export function limitCurrentProblem(maxCurrentA: number): string | undefined {
  if (!Number.isFinite(maxCurrentA) || maxCurrentA <= 0) return 'expected a number of amperes above 0';
  if (maxCurrentA < TEMPORARY_LIMIT_STEP_A) return `expected at least ${TEMPORARY_LIMIT_STEP_A} A`;
  if (maxCurrentA > MAX_TEMPORARY_LIMIT_A) return `expected at most ${MAX_TEMPORARY_LIMIT_A} A`;
  const tenths = maxCurrentA / TEMPORARY_LIMIT_STEP_A;
  if (Math.abs(tenths - Math.round(tenths)) > 1e-6) return 'expected whole tenths of an ampere (16.5, not 16.25)';
  return undefined;
}

/** RFC 3339: a real calendar date and time, with seconds and an offset. */
const ISO_WITH_OFFSET = z.iso.datetime({ offset: true });

/**
 * Why a requested `until` is refused (undefined: it is not): an ISO 8601 date-time with an offset (Z or ±hh:mm; a
 * time without one would mean whatever the gateway's zone is), after `now` and at most MAX_TEMPORARY_LIMIT_DAYS
 * ahead (so no year of five digits is ever shown, in any zone).
 */
export function limitUntilProblem(until: string, now: Date): string | undefined {
  const at = Date.parse(until);
  if (!ISO_WITH_OFFSET.safeParse(until).success || Number.isNaN(at))
    return 'expected an ISO 8601 date-time with seconds and an offset, e.g. 2026-11-21T18:00:00+01:00';
  if (at <= now.getTime()) return `must be in the future (it is ${now.toISOString()} now)`;
  if (at > now.getTime() + MAX_TEMPORARY_LIMIT_DAYS * 86_400_000)
    return `must be at most ${MAX_TEMPORARY_LIMIT_DAYS} days from now (it is ${now.toISOString()} now)`;
  return undefined;
}

interface LimitRow {
  circuit_id: string;
  site_id: string;
  max_current_a: number;
  until: string;
  set_at: string;
  set_by: string;
}

function fromRow(row: LimitRow): TemporaryLimit {
  return {
    circuitId: row.circuit_id,
    siteId: row.site_id,
    maxCurrentA: row.max_current_a,
    until: new Date(row.until),
    setAt: new Date(row.set_at),
    setBy: row.set_by,
  };
}

/** Every stored limit, the ended ones too (those are deleted at the next write). */
export function storedTemporaryLimits(db: Database): TemporaryLimit[] {
  return statement<[], LimitRow>(db, 'SELECT * FROM circuit_temporary_limits ORDER BY circuit_id').all().map(fromRow);
}

/** Limits whose end has passed: nothing reads them any more. */
function deleteEnded(db: Database, now: Date): void {
  for (const limit of storedTemporaryLimits(db))
    if (limit.until.getTime() <= now.getTime())
      statement(db, 'DELETE FROM circuit_temporary_limits WHERE circuit_id = ?').run(limit.circuitId);
}

/**
 * The temporary limits of one process (the daemon, or a CLI command): written through its Writer, read from the
 * database into a cache that a write, refresh() or the change counter (watch()) renews. A limit whose `until` has
 * passed is not active: expiry needs no timer, every read compares with the clock.
 */
export class TemporaryLimits implements TemporaryLimitSource {
  private limits = new Map<string, TemporaryLimit>();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly options: { writer: Writer; now?: () => Date }) {
    this.refresh();
  }

  private get db(): Database {
    return this.options.writer.db;
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  active(at: Date = this.now()): ReadonlyMap<string, TemporaryLimit> {
    return new Map([...this.limits].filter(([, limit]) => limit.until.getTime() > at.getTime()));
  }

  /** The circuit's limit in force at `at`, if any. */
  of(circuitId: string, at: Date = this.now()): TemporaryLimit | undefined {
    const limit = this.limits.get(circuitId);
    return limit && limit.until.getTime() > at.getTime() ? limit : undefined;
  }

  /**
   * Sets (replaces) a circuit's limit; durable when it resolves. The caller has checked the circuit and the values
   * (limitCurrentProblem, limitUntilProblem).
   */
  async set(limit: Omit<TemporaryLimit, 'setAt'>): Promise<TemporaryLimit> {
    const { writer } = this.options;
    const stored: TemporaryLimit = { ...limit, setAt: this.now() };
    await writer.durable(() =>
      writer.write(() => {
        deleteEnded(this.db, stored.setAt);
        statement(
          this.db,
          `INSERT INTO circuit_temporary_limits (circuit_id, site_id, max_current_a, until, set_at, set_by)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (circuit_id) DO UPDATE SET site_id = excluded.site_id, max_current_a = excluded.max_current_a,
             until = excluded.until, set_at = excluded.set_at, set_by = excluded.set_by`,
        ).run(
          stored.circuitId,
          stored.siteId,
          stored.maxCurrentA,
          stored.until.toISOString(),
          stored.setAt.toISOString(),
          stored.setBy,
        );
        bumpChangeCounter(this.db, TEMPORARY_LIMITS_TOPIC);
      }),
    );
    this.refresh();
    return stored;
  }

  /** Ends a circuit's limit now; resolves with the one that was in force, undefined when none was (nothing changed). */
  async clear(circuitId: string): Promise<TemporaryLimit | undefined> {
    const { writer } = this.options;
    const now = this.now();
    const ended = await writer.durable(() =>
      writer.write(() => {
        const row = statement<[string], LimitRow>(
          this.db,
          'SELECT * FROM circuit_temporary_limits WHERE circuit_id = ?',
        ).get(circuitId);
        const inForce = row && fromRow(row).until.getTime() > now.getTime() ? fromRow(row) : undefined;
        deleteEnded(this.db, now);
        if (!inForce) return undefined;
        statement(this.db, 'DELETE FROM circuit_temporary_limits WHERE circuit_id = ?').run(circuitId);
        bumpChangeCounter(this.db, TEMPORARY_LIMITS_TOPIC);
        return inForce;
      }),
    );
    if (ended) this.refresh();
    return ended;
  }

  /** Reads the limits again (another process wrote them) and tells the listeners. */
  refresh(): void {
    this.limits = new Map(storedTemporaryLimits(this.db).map((limit) => [limit.circuitId, limit]));
    for (const listener of this.listeners) listener();
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Re-reads the limits whenever another process (the CLI) wrote them; returns the function that stops watching. A
   * read that fails is logged once and tried again at the next poll (the limits read last stay meanwhile).
   */
  watch(intervalMs: number, logger: Logger): () => void {
    let seen = readChangeCounter(this.db, TEMPORARY_LIMITS_TOPIC);
    let failing = false;
    const timer = setInterval(() => {
      try {
        const version = readChangeCounter(this.db, TEMPORARY_LIMITS_TOPIC);
        if (version !== seen) {
          this.refresh();
          seen = version;
        }
        if (failing) logger.info('temporary limits read again');
        failing = false;
      } catch (err) {
        if (!failing) logger.error({ err }, 'temporary limits not read: the next poll tries again');
        failing = true;
      }
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}
