import {
  compositeOf,
  within,
  type ConnectorPlace,
  type CsmsSchedules,
  type LimitProfile,
  type PlacedProfile,
  type ProfilePurpose,
  type Steps,
  type Window,
} from '../load/index.js';
import type { Logger } from '../log/index.js';
import { statement, type GroupCommit } from '../store/index.js';

/**
 * A RemoteStartTransaction's profile is kept for the transaction it starts this long: a station gives up waiting for
 * the car well before (its ConnectionTimeOut, a minute or two), so a later transaction of the same idTag is another.
 */
const REMOTE_START_WAIT_MS = 5 * 60_000;

/**
 * The CSMS's profiles kept per connector, and for the whole station (connector 0), as a station whose
 * MaxChargingProfilesInstalled is 16 keeps them: beyond them SetChargingProfile is Rejected (docs/operating/security.md#security). With
 * at most 1,000 periods each, a composite has at most 48,000 steps a day to look at.
 */
export const MAX_PROFILES_PER_CONNECTOR = 16;

/**
 * A composite is worked out over the window asked and this much more, once per change of the station's profiles:
 * load management's steps, the fail-safe's day and GetCompositeSchedule read it again until it runs out (an hour on).
 */
const COMPOSED_AHEAD_MS = 3_600_000;
/** Composites kept per station (a place per connector, per transaction on it, and for any start). */
const COMPOSED_PLACES = 32;

/** The transactions the CSMS's profiles belong to (site/ implements it). */
export interface ProfileTransactions {
  byId(id: number):
    | {
        stationId: string;
        connectorId: number;
        idTag: string;
        startedAt: string;
        stoppedAt: string | null;
        /** A 2.0.1 station's own id for it. */
        stationTransactionId: string | null;
      }
    | undefined;
  openOn(stationId: string, connectorId: number): { id: number } | undefined;
  /** Told, by id, once a start or stop is committed and answered. Returns the unsubscribe. */
  onOpenedOrClosed(listener: (transactionId: number) => void): () => void;
}

/** What ClearChargingProfile names: a profile by id, else every one matching all the criteria given. */
export interface ClearCriteria {
  id?: number;
  connectorId?: number;
  purpose?: ProfilePurpose;
  stackLevel?: number;
}

/**
 * Why a profile is not kept: in words, and as OCPP 2.0.1's statusInfo reasonCode says it (the codes a 2.0.1 station
 * answers with).
 */
export interface Refusal {
  reasonCode:
    'DuplicateProfile' | 'InvalidValue' | 'MissingParam' | 'OutOfStorage' | 'TxNotFound' | 'UnsupportedRequest';
  why: string;
}

/**
 * A profile of the same connector, purpose and stack level with another id: 1.6 replaces it with the new one (§5.16),
 * 2.0.1 refuses the new one while their validity overlaps (K01.FR.06, K01.FR.39).
 */
export type SameLevelRule = 'replaces' | 'refused';

/** A remote start's transaction profile until its transaction starts: it limits nothing yet. */
interface RemoteStart {
  idTag: string;
  receivedAtMs: number;
  /** A 2.0.1 RequestStartTransaction's id, which the station's TransactionEvent repeats. */
  remoteStartId?: number;
  /** The station's id of the transaction it began, once the station said (in memory: else bound by idTag). */
  stationTransactionId?: string;
}

interface Kept extends PlacedProfile {
  remoteStart?: RemoteStart;
}

interface Row {
  connectorId: number;
  transactionId: number | null;
  remoteStartIdTag: string | null;
  remoteStartId: number | null;
  profile: string;
  receivedAt: string;
}

/**
 * The CSMS's charging profiles for the stations on a circuit (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles), kept as a
 * station keeps them (OCPP 1.6 §3.13, §5.16; 2.0.1 K01), whichever version sent them: one per id; another id at the
 * connector, purpose and stack level of one kept replaces it under 1.6 and is refused under 2.0.1 while their
 * validity overlaps (SameLevelRule); a TxProfile with its transaction and gone with it; a station maximum only on
 * connector 0. Load management reads them (CsmsSchedules) and sends the lower of them and its own
 * limits; nothing here reaches a station. Written durably before the CSMS hears Accepted; read from memory. At most
 * MAX_PROFILES_PER_CONNECTOR per connector; composed once per change of a station's profiles, never per load step.
 */
export class CsmsProfiles implements CsmsSchedules {
  private readonly byStation = new Map<string, Kept[]>();
  /** Each station's composites since its profiles last changed, by place (placeKey), in insertion order. */
  private readonly composed = new Map<string, Map<string, Steps>>();
  private readonly listeners = new Set<(stationId: string) => void>();
  private readonly stopHearing: () => void;

  constructor(
    private readonly writer: GroupCommit,
    private readonly transactions: ProfileTransactions,
    private readonly log: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.stopHearing = transactions.onOpenedOrClosed((id) => this.openedOrClosed(id));
    this.deleteStale();
    const stations = statement<[], string>(writer.db, 'SELECT DISTINCT station_id FROM csms_charging_profiles')
      .pluck()
      .all();
    for (const stationId of stations) this.read(stationId);
  }

  scheduleOf(stationId: string, place: ConnectorPlace, window: Window): Steps {
    const kept = this.byStation.get(stationId);
    if (!kept) return compositeOf([], place, window);
    let places = this.composed.get(stationId);
    if (!places) this.composed.set(stationId, (places = new Map()));
    const key = placeKey(place);
    const cached = places.get(key);
    if (cached && cached.window.fromMs <= window.fromMs && window.toMs <= cached.window.toMs)
      return within(cached, window);
    const over = { fromMs: window.fromMs, toMs: window.toMs + COMPOSED_AHEAD_MS };
    const steps = compositeOf(
      kept.filter((k) => !k.remoteStart),
      place,
      over,
    );
    places.delete(key);
    if (places.size >= COMPOSED_PLACES) places.delete(places.keys().next().value!);
    places.set(key, steps);
    return within(steps, window);
  }

  /** A connector of the station as its running transaction makes it (its TxProfiles apply), for scheduleOf. */
  placeOf(stationId: string, connectorId: number, phases: 1 | 3): ConnectorPlace {
    const running = this.transactions.openOn(stationId, connectorId);
    const t = running && this.transactions.byId(running.id);
    return { connectorId, phases, ...(t && { transaction: { id: running.id, startedAtMs: Date.parse(t.startedAt) } }) };
  }

  onChange(listener: (stationId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Keeps a profile; resolves once it is durable, with undefined, or with why it was refused. A transaction profile
   * belongs to the transaction running on its connector (`transactionId`, chargegate's, when the CSMS named one, must
   * be that one).
   */
  async set(
    stationId: string,
    connectorId: number,
    profile: LimitProfile,
    rules: { transactionId?: number; sameLevel: SameLevelRule },
  ): Promise<Refusal | undefined> {
    let runningId: number | undefined;
    if (profile.purpose === 'stationMaximum' && connectorId !== 0)
      return { reasonCode: 'InvalidValue', why: 'a station maximum belongs on connector 0' };
    if (profile.purpose === 'transaction') {
      if (connectorId === 0) return { reasonCode: 'InvalidValue', why: 'a transaction profile needs a connector' };
      runningId = this.transactions.openOn(stationId, connectorId)?.id;
      if (runningId === undefined) return { reasonCode: 'TxNotFound', why: 'no transaction runs on the connector' };
      if (rules.transactionId !== undefined && rules.transactionId !== runningId)
        return { reasonCode: 'TxNotFound', why: 'not the transaction running on the connector' };
    }
    if (
      rules.sameLevel === 'refused' &&
      this.sameLevel(stationId, connectorId, profile).some((k) => overlap(k, profile))
    )
      return { reasonCode: 'DuplicateProfile', why: 'another profile holds its stack level and purpose there' };
    const full = this.full(stationId, connectorId, profile, rules.sameLevel);
    if (full) return full;
    await this.changed(stationId, () => {
      this.replaced(stationId, connectorId, profile, rules.sameLevel);
      this.insert(stationId, connectorId, profile, runningId === undefined ? {} : { transactionId: runningId });
    });
    return undefined;
  }

  /**
   * Why there is no room for one more profile at the connector (0: the whole station), undefined when there is: one
   * that replaces a kept one (its id, or under 1.6 its stack level and purpose there) takes that one's place.
   */
  full(stationId: string, connectorId: number, profile: LimitProfile, sameLevel: SameLevelRule): Refusal | undefined {
    const replaced = sameLevel === 'replaces' ? this.sameLevel(stationId, connectorId, profile) : [];
    const staying = (this.byStation.get(stationId) ?? []).filter(
      (k) => k.connectorId === connectorId && k.profile.id !== profile.id && !replaced.includes(k),
    );
    if (staying.length < MAX_PROFILES_PER_CONNECTOR) return undefined;
    const where = connectorId === 0 ? 'the whole station' : `connector ${connectorId}`;
    const most = MAX_PROFILES_PER_CONNECTOR;
    const why = `${staying.length} profiles kept for ${where} already: chargegate keeps at most ${most} per connector`;
    return { reasonCode: 'OutOfStorage', why: `${why} and ${most} for the whole station` };
  }

  /**
   * Keeps a remote start's transaction profile for the transaction the remote start begins: the one the station names
   * by its `remoteStartId` (2.0.1), else the next one its idTag starts on the station (on its connector, when named),
   * within REMOTE_START_WAIT_MS. Resolves, once durable, with what withdraws it (the station refused the start).
   */
  async expectRemoteStart(
    stationId: string,
    start: { connectorId?: number; idTag: string; remoteStartId?: number },
    profile: LimitProfile,
  ): Promise<() => Promise<void>> {
    const { connectorId, idTag, remoteStartId } = start;
    await this.changed(stationId, () =>
      this.insert(stationId, connectorId ?? 0, profile, {
        remoteStart: { idTag, ...(remoteStartId !== undefined && { remoteStartId }) },
      }),
    );
    return () =>
      this.changed(stationId, () =>
        statement(
          this.writer.db,
          'DELETE FROM csms_charging_profiles WHERE station_id = ? AND profile_id = ? AND remote_start_id_tag IS NOT NULL',
        ).run(stationId, profile.id),
      );
  }

  /**
   * A 2.0.1 station said which of its transactions a RequestStartTransaction began (its TransactionEvent's
   * remoteStartId, or the answer naming one already running): the profile waiting for that start goes to that one.
   * Only a CSMS start still waiting, and of the event's idToken when it names one: the API's remote starts have
   * remoteStartIds of their own, which a CSMS's may equal.
   */
  noteRemoteStarted(stationId: string, stationTransactionId: string, remoteStartId: number, idToken?: string): void {
    const nowMs = this.now().getTime();
    for (const k of this.byStation.get(stationId) ?? [])
      if (
        k.remoteStart?.remoteStartId === remoteStartId &&
        waits(k.remoteStart, nowMs) &&
        (idToken === undefined || k.remoteStart.idTag === idToken)
      )
        k.remoteStart.stationTransactionId = stationTransactionId;
  }

  /** ClearChargingProfile: resolves, once durable, with whether any profile was cleared. */
  async clear(stationId: string, criteria: ClearCriteria): Promise<boolean> {
    const matching = (this.byStation.get(stationId) ?? []).filter((k) =>
      criteria.id !== undefined
        ? k.profile.id === criteria.id
        : (criteria.connectorId === undefined || k.connectorId === criteria.connectorId) &&
          (criteria.purpose === undefined || k.profile.purpose === criteria.purpose) &&
          (criteria.stackLevel === undefined || k.profile.stackLevel === criteria.stackLevel),
    );
    if (matching.length === 0) return false;
    await this.changed(stationId, () => {
      for (const k of matching) this.delete(stationId, k.profile.id);
    });
    return true;
  }

  stop(): void {
    this.stopHearing();
  }

  /**
   * What went stale while the daemon was down: TxProfiles of transactions that ended meanwhile, and remote starts'
   * profiles past their wait (else each stays until its station starts another transaction). A failed delete leaves
   * them to the next start: read() and the wait already leave them out.
   */
  private deleteStale(): void {
    const waitedSince = new Date(this.now().getTime() - REMOTE_START_WAIT_MS).toISOString();
    try {
      // Committed at once: a group left open through the rest of the start would lock out its other connections.
      this.writer.writeNow(() =>
        statement(
          this.writer.db,
          `DELETE FROM csms_charging_profiles
            WHERE transaction_id IN (SELECT id FROM transactions WHERE stopped_at IS NOT NULL)
               OR (remote_start_id_tag IS NOT NULL AND received_at <= ?)`,
        ).run(waitedSince),
      );
    } catch (err) {
      this.log.error({ err }, 'stale CSMS profiles not deleted: they limit nothing');
    }
  }

  /**
   * A transaction started: a remote start's profile waiting for it is bound to it. One ended: its profiles go (a
   * TxProfile lives as long as its transaction). Nothing is written for a transaction the CSMS gave no profile.
   */
  private openedOrClosed(transactionId: number): void {
    if (this.byStation.size === 0) return;
    const t = this.transactions.byId(transactionId);
    const kept = t && this.byStation.get(t.stationId);
    if (!t || !kept) return;
    const nowMs = this.now().getTime();
    if (t.stoppedAt !== null) {
      if (!kept.some((k) => k.transactionId === transactionId)) return;
      return void this.changed(t.stationId, () =>
        statement(this.writer.db, 'DELETE FROM csms_charging_profiles WHERE transaction_id = ?').run(transactionId),
      ).catch((err: unknown) => this.log.error({ err }, 'a CSMS profile of an ended transaction not deleted'));
    }
    const waiting = kept.filter((k) => k.remoteStart && waits(k.remoteStart, nowMs));
    const expired = kept.filter((k) => k.remoteStart && !waiting.includes(k));
    // The one the station said it began, else (a station that does not say, 1.6) the latest for its idTag.
    const bound =
      waiting.find(
        (k) => t.stationTransactionId !== null && k.remoteStart!.stationTransactionId === t.stationTransactionId,
      ) ??
      waiting
        .filter(
          ({ remoteStart, connectorId }) =>
            remoteStart!.stationTransactionId === undefined &&
            remoteStart!.idTag === t.idTag &&
            (connectorId === 0 || connectorId === t.connectorId),
        )
        .at(-1);
    if (!bound && expired.length === 0) return;
    void this.changed(t.stationId, () => {
      for (const k of expired) this.delete(t.stationId, k.profile.id);
      if (!bound) return;
      // A transaction that just began has no other TxProfile: 2.0.1 would find nothing to refuse it for either.
      this.replaced(t.stationId, t.connectorId, bound.profile, 'replaces', bound);
      statement(
        this.writer.db,
        `UPDATE csms_charging_profiles SET connector_id = ?, transaction_id = ?, remote_start_id_tag = NULL, remote_start_id = NULL
          WHERE station_id = ? AND profile_id = ?`,
      ).run(t.connectorId, transactionId, t.stationId, bound.profile.id);
      this.log.info(
        { stationId: t.stationId, transactionId, profileId: bound.profile.id },
        "the CSMS's remote start profile applies to its transaction",
      );
    }).catch((err: unknown) => this.log.error({ err }, 'a CSMS remote start profile not bound to its transaction'));
  }

  /**
   * Runs a change in one durable write, then reads the station's profiles again and tells the listeners; rejects
   * (nothing changed) when the write fails.
   */
  private async changed(stationId: string, change: () => unknown): Promise<void> {
    await this.writer.durable(() => this.writer.write(change));
    this.read(stationId);
    for (const listener of this.listeners) listener(stationId);
  }

  /**
   * Deletes what a profile replaces where it comes to apply: the same id, and under 1.6's rule the same connector,
   * purpose and stack level (`bound`: a remote start's, which is not replaced by itself).
   */
  private replaced(
    stationId: string,
    connectorId: number,
    profile: LimitProfile,
    sameLevel: SameLevelRule,
    bound?: Kept,
  ): void {
    const level = sameLevel === 'replaces' ? this.sameLevel(stationId, connectorId, profile) : [];
    const replaces = (k: Kept): boolean => k !== bound && (k.profile.id === profile.id || level.includes(k));
    for (const k of (this.byStation.get(stationId) ?? []).filter(replaces)) this.delete(stationId, k.profile.id);
  }

  /** The station's profiles (not waiting for a remote start) at a connector, purpose and stack level, of other ids. */
  private sameLevel(stationId: string, connectorId: number, profile: LimitProfile): Kept[] {
    return (this.byStation.get(stationId) ?? []).filter(
      (k) =>
        !k.remoteStart &&
        k.profile.id !== profile.id &&
        k.connectorId === connectorId &&
        k.profile.purpose === profile.purpose &&
        k.profile.stackLevel === profile.stackLevel,
    );
  }

  private insert(
    stationId: string,
    connectorId: number,
    profile: LimitProfile,
    bound: { transactionId?: number; remoteStart?: { idTag: string; remoteStartId?: number } },
  ): void {
    statement(
      this.writer.db,
      `INSERT OR REPLACE INTO csms_charging_profiles
         (station_id, profile_id, connector_id, transaction_id, remote_start_id_tag, remote_start_id, profile, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      stationId,
      profile.id,
      connectorId,
      bound.transactionId ?? null,
      bound.remoteStart?.idTag ?? null,
      bound.remoteStart?.remoteStartId ?? null,
      JSON.stringify(profile),
      this.now().toISOString(),
    );
  }

  private delete(stationId: string, profileId: number): void {
    statement(this.writer.db, 'DELETE FROM csms_charging_profiles WHERE station_id = ? AND profile_id = ?').run(
      stationId,
      profileId,
    );
  }

  /** The station's profiles as written; a TxProfile whose transaction has ended (while the daemon was down) is left out. */
  private read(stationId: string): void {
    const rows = statement<[string], Row>(
      this.writer.db,
      `SELECT p.connector_id AS connectorId, p.transaction_id AS transactionId, p.remote_start_id_tag AS remoteStartIdTag,
              p.remote_start_id AS remoteStartId, p.profile, p.received_at AS receivedAt
         FROM csms_charging_profiles p LEFT JOIN transactions t ON t.id = p.transaction_id
        WHERE p.station_id = ? AND (p.transaction_id IS NULL OR t.stopped_at IS NULL)
        ORDER BY p.received_at`,
    ).all(stationId);
    // What the station said of a waiting remote start stays known when the station's profiles are read again.
    const said = new Map(
      (this.byStation.get(stationId) ?? []).flatMap((k) =>
        k.remoteStart?.stationTransactionId === undefined ? [] : [[k.profile.id, k.remoteStart.stationTransactionId]],
      ),
    );
    const kept = rows.map((r): Kept => {
      const receivedAtMs = Date.parse(r.receivedAt);
      const profile = JSON.parse(r.profile) as LimitProfile;
      const stationTransactionId = said.get(profile.id);
      return {
        connectorId: r.connectorId,
        profile,
        receivedAtMs,
        ...(r.transactionId !== null && { transactionId: r.transactionId }),
        ...(r.remoteStartIdTag !== null && {
          remoteStart: {
            idTag: r.remoteStartIdTag,
            receivedAtMs,
            ...(r.remoteStartId !== null && { remoteStartId: r.remoteStartId }),
            ...(stationTransactionId !== undefined && { stationTransactionId }),
          },
        }),
      };
    });
    this.composed.delete(stationId);
    if (kept.length === 0) this.byStation.delete(stationId);
    else this.byStation.set(stationId, kept);
  }
}

/** What tells one place's composite from another's: all that compositeOf reads of it. */
function placeKey(place: ConnectorPlace): string {
  const { connectorId, phases, transaction, anyStart = false } = place;
  return `${connectorId} ${phases} ${anyStart} ${transaction?.id} ${transaction?.startedAtMs}`;
}

/** Whether a remote start's profile still waits for its transaction. */
function waits(remoteStart: RemoteStart, nowMs: number): boolean {
  return nowMs - remoteStart.receivedAtMs < REMOTE_START_WAIT_MS;
}

/** Whether two profiles' validity periods (unbounded where not given) share an instant. */
function overlap(kept: Kept, profile: LimitProfile): boolean {
  const { validFromMs = -Infinity, validToMs = Infinity } = kept.profile;
  return validFromMs < (profile.validToMs ?? Infinity) && (profile.validFromMs ?? -Infinity) < validToMs;
}
