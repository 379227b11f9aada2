import { isDeepStrictEqual } from 'node:util';
import { Gauge, type Registry } from 'prom-client';
import type { UpstreamClient, UpstreamConnect } from '../authorization/index.js';
import { readConfiguredFile, type Config } from '../config/index.js';
import type { HealthLevel, HealthSource } from '../health/index.js';
import type { ConnectorComposite, CsmsSchedules, Window } from '../load/index.js';
import { messageOf, type Logger } from '../log/index.js';
import {
  OCPP16,
  OCPP201,
  type CentralSystem,
  type ForwardedMessage,
  type StationMessageForwarder,
} from '../ocpp/index.js';
import type { Site } from '../site/index.js';
import type { GroupCommit } from '../store/index.js';
import type { CsmsCallHandler } from './csms-calls.js';
import { stationConnectors, type ProfileCallContext } from './csms-profile-calls.js';
import { CsmsProfiles } from './csms-profiles.js';
import { LocalListSync } from './local-list-sync.js';
import { UplinkQueue } from './queue.js';
import type { LinkStateName } from './link-state.js';
import { REAL_LINK_DEPS, StationLink, type LinkClock, type LinkSettings } from './station-link.js';
import { v16 } from './v16/index.js';
import { v201 } from './v201/index.js';
import { keepBootNotification } from './v201/dialect.js';
import type { UplinkVersion } from './version.js';

/** `chargegate upstream status` and /health: one station's uplink. */
export interface UplinkStationStatus {
  stationId: string;
  connected: boolean;
  state: LinkStateName;
  queued: number;
  oldestQueuedAt: string | null;
  dropped: number;
  level: HealthLevel;
}

export interface UplinkOptions {
  config: () => Config;
  writer: GroupCommit;
  site: Site;
  /** The password each station presents to the CSMS (profiles 1-2), kept in the keystore. */
  upstreamPassword(stationId: string): string | undefined;
  logger: Logger;
  metrics?: Registry;
  now?: () => Date;
  /** The links' timers (reconnect back-off, retry waits, boot asked again): a test's own clock; the real one if unset. */
  linkClock?: LinkClock;
}

/** The OCPP versions a station's link speaks, each one's parts (v16/, v201/). */
const VERSIONS: ReadonlyMap<string, UplinkVersion> = new Map([
  [OCPP16, v16],
  [OCPP201, v201],
]);

/** docs/design/uplink.md#uplink-what-the-csms-sees, seeing it: a queue waiting longer than this, or a link down this long with one, warns. */
const WARN_AFTER_MS = 60_000;
/** ocpp-rpc's own reconnect back-off: 1 s doubling up to 10 s. */
const RECONNECT_MS = { initial: 1000, max: 10_000 };

type CsmsConfig = NonNullable<NonNullable<Config['upstream']>['csms']>;

/** What a link is made with: a reload that changes any of it (but the queue limits) makes the links again. */
interface LinkedWith {
  csms: CsmsConfig;
  tls: LinkSettings['tls'];
  timeoutMs: number;
  maxMessageBytes: number;
}

function linkedConfig(config: Config): Omit<LinkedWith, 'tls'> {
  return {
    csms: config.upstream!.csms!,
    timeoutMs: config.upstream!.timeoutMs,
    maxMessageBytes: config.ocpp.maxMessageBytes,
  };
}

function readTls(csms: CsmsConfig): LinkSettings['tls'] {
  const file = (name: 'ca' | 'cert' | 'key') =>
    csms.tls?.[name] ? { [name]: readConfiguredFile(csms.tls[name], `upstream.csms.tls.${name}`) } : {};
  return csms.tls && { ...file('ca'), ...file('cert'), ...file('key') };
}

/**
 * The gateway as the local controller of the operator's CSMS (docs/design/uplink.md#uplink-what-the-csms-sees): one link per OCPP station,
 * in the station's version, open while the station is connected or its queue holds messages; the forwarder the OCPP
 * handlers hand what stations sent; the Authorize connection of the decision chain.
 */
export class Uplink implements StationMessageForwarder {
  private readonly links = new Map<string, StationLink>();
  /**
   * Stations of the site connected to chargegate now, with the OCPP version each speaks: a link with an empty queue
   * closes once its station left.
   */
  private readonly connected = new Map<string, string>();
  /** The OCPP version each station last connected with (any station whose calls may reach the queue). */
  private readonly protocols = new Map<string, string>();
  private stopped = false;
  private readonly messages: UplinkQueue;
  private readonly profiles: CsmsProfiles;
  /** Load management's composites, once it runs (docs/design/uplink.md#uplink-what-the-csms-sees, charging profiles). */
  private composites: (stationId: string, window: Window) => readonly ConnectorComposite[] = () => [];
  private readonly log: Logger;
  private readonly now: () => Date;
  private central: CentralSystem | undefined;
  /** What the CSMS's calls become, per OCPP version; made at start, before the first link. */
  private readonly fromCsms = new Map<UplinkVersion, CsmsCallHandler>();
  private stopHearing: (() => void) | undefined;
  private lastCsms: CsmsConfig;
  /**
   * The CSMS the links reach and its TLS files, read at start and at a reload, so an unreadable file fails the start
   * (UnreadableFileError, naming the key path) or leaves the reload's links as they were, never a link made later
   * from a connection or a commit callback.
   */
  private linkedWith: LinkedWith;

  constructor(private readonly options: UplinkOptions) {
    const csms = options.config().upstream?.csms;
    if (!csms) throw new Error('the uplink runs only with upstream.csms');
    this.lastCsms = csms;
    this.linkedWith = { ...linkedConfig(options.config()), tls: readTls(csms) };
    this.log = options.logger.child({ component: 'uplink' });
    this.now = options.now ?? (() => new Date());
    this.messages = new UplinkQueue(
      options.writer,
      () => ({ messages: this.csms().queueLimit, bytes: this.csms().queueBytesLimit }),
      (stationId) => this.committed(stationId),
      this.log,
    );
    this.profiles = new CsmsProfiles(options.writer, options.site.transactions, this.log, this.now);
    if (options.metrics) this.registerMetrics(options.metrics);
  }

  /** The CSMS's charging profiles, which load management composes with its own limits. */
  get csmsSchedules(): CsmsSchedules {
    return this.profiles;
  }

  /** Load management answers, per station, what its connectors get: GetCompositeSchedule is answered with it. */
  composeWith(composites: (stationId: string, window: Window) => readonly ConnectorComposite[]): void {
    this.composites = composites;
  }

  /** Starts the links: of stations with a backlog now, and of each station once it connects. */
  start(central: CentralSystem): void {
    this.central = central;
    const context = {
      central,
      site: this.options.site,
      localLists: new LocalListSync(this.options.writer, this.log, this.now),
      log: this.log,
    };
    for (const version of VERSIONS.values()) this.fromCsms.set(version, version.csmsCalls(context));
    this.stopHearing = central.onConnection(({ stationId, connected, protocol }) => {
      if (protocol === undefined || !VERSIONS.has(protocol)) return;
      if (connected) {
        // Only the site's stations: an identity admitted by acceptUnknownStations is not remembered for ever.
        if (this.options.site.stations.admission(stationId).verdict !== 'known') return;
        this.protocols.set(stationId, protocol);
        this.connected.set(stationId, protocol);
        this.linkOf(stationId);
      } else {
        this.connected.delete(stationId);
        this.closeIfIdle(stationId);
      }
    });
    for (const stationId of this.messages.stationsWithBacklog()) this.linkOf(stationId);
  }

  queue(stationId: string, message: ForwardedMessage): void {
    // Admitted only by ocpp.acceptUnknownStations: not a station of the site until paired, so neither linked at its
    // connect nor forwarded (docs/design/uplink.md#uplink-what-the-csms-sees).
    if (this.options.site.stations.admission(stationId).verdict === 'unknown') return;
    const version = versionOf(this.protocols.get(stationId));
    const accepted = this.links.get(stationId)?.state === 'accepted';
    this.messages.append(stationId, version.protocol, version.queued(message, accepted), this.now());
    const started = version.remoteStart(message);
    if (started)
      this.profiles.noteRemoteStarted(stationId, started.stationTransactionId, started.remoteStartId, started.idToken);
  }

  live(stationId: string, action: string, payload: object): void {
    this.links.get(stationId)?.live(action, payload);
  }

  keepBootNotification(stationId: string, payload: object): void {
    keepBootNotification(this.options.writer.db, stationId, payload);
  }

  /** The decision chain's Authorize goes over the station's own link (a second connection would replace it). */
  readonly connectUpstream: UpstreamConnect = async (_url, stationId): Promise<UpstreamClient> => {
    // A station that is not connected has no link to ask over: its Authorize falls back as when the CSMS is away.
    if (!this.connected.has(stationId)) throw new Error(`${stationId} has no uplink: not a connected station`);
    const link = this.linkOf(stationId);
    return {
      authorize: (idTag, idTokenType) => link.authorize(idTag, idTokenType),
      isClosed: () => this.links.get(stationId) !== link,
      close: async () => undefined,
    };
  };

  status(): UplinkStationStatus[] {
    const stats = this.messages.stats();
    const dropped = this.messages.droppedCounts();
    const stationIds = new Set([...this.links.keys(), ...stats.keys(), ...dropped.keys()]);
    const { queueLimit, queueBytesLimit } = this.csms();
    const now = this.now().getTime();
    return [...stationIds].sort().map((stationId) => {
      const link = this.links.get(stationId);
      const { queued, oldestQueuedAt } = stats.get(stationId) ?? { queued: 0, oldestQueuedAt: null };
      const state = link?.state ?? 'closed';
      const connected = state === 'accepted';
      const downLong = !connected && now - (link?.downSince.getTime() ?? 0) > WARN_AFTER_MS;
      const waitingLong = oldestQueuedAt !== null && now - new Date(oldestQueuedAt).getTime() > WARN_AFTER_MS;
      // Full in messages or bytes: the next message may drop a reading.
      const full =
        queued >= queueLimit ||
        this.messages.bytesQueued(stationId) + this.linkedWith.maxMessageBytes > queueBytesLimit;
      const level: HealthLevel = full
        ? 'critical'
        : (queued > 0 && (downLong || waitingLong)) || state === 'pending' || state === 'rejected'
          ? 'warning'
          : 'ok';
      return { stationId, connected, state, queued, oldestQueuedAt, dropped: dropped.get(stationId) ?? 0, level };
    });
  }

  health(): HealthSource {
    return {
      name: 'upstream',
      report: () => {
        const stations = this.status();
        const levels = stations.map((s) => s.level);
        const status: HealthLevel = levels.includes('critical')
          ? 'critical'
          : levels.includes('warning')
            ? 'warning'
            : 'ok';
        return { status, url: this.csms().url, stations };
      },
    };
  }

  /**
   * SIGHUP: a CSMS reached otherwise (url, profile, TLS files or their content, attempts) closes every link and opens
   * it again there. The queue and the CSMS's transaction ids stay: what waits goes to the new address, taken for the
   * same central system moved (docs/design/uplink.md#uplink-what-the-csms-sees).
   */
  reload(): void {
    const csms = this.options.config().upstream?.csms;
    if (!csms) return;
    let tls: LinkSettings['tls'];
    try {
      tls = readTls(csms);
    } catch (err) {
      this.log.error(
        { error: messageOf(err) },
        'reloaded upstream.csms.tls cannot be read: the links stay as they are',
      );
      return;
    }
    const next = { ...linkedConfig(this.options.config()), tls };
    const same = (a: LinkedWith, b: LinkedWith) =>
      isDeepStrictEqual(
        { ...a, csms: { ...a.csms, queueLimit: 0, queueBytesLimit: 0 } },
        { ...b, csms: { ...b.csms, queueLimit: 0, queueBytesLimit: 0 } },
      );
    if (this.stopped || same(next, this.linkedWith)) return;
    this.linkedWith = next;
    const stations = [...this.links.keys()];
    for (const link of this.links.values()) void link.close();
    this.links.clear();
    for (const stationId of stations) this.linkOf(stationId);
    this.log.info({ url: csms.url, stations: stations.length }, 'uplink moved to the reloaded upstream.csms');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopHearing?.();
    this.profiles.stop();
    await Promise.all([...this.links.values()].map((link) => link.close()));
    this.links.clear();
    this.messages.flush();
  }

  /** upstream.csms as it is now; a reload that removed it keeps the one the links started with until a restart. */
  private csms(): CsmsConfig {
    const csms = this.options.config().upstream?.csms;
    if (csms) this.lastCsms = csms;
    return this.lastCsms;
  }

  private committed(stationId: string): void {
    // A row whose commit lands while the daemon stops is sent after the next start, not on a link made now.
    if (this.stopped) return;
    this.linkOf(stationId).wake();
  }

  /**
   * The station's link, in the version it is connected with, else in its backlog's. A station back in another version
   * (a firmware update) gets a new link; what it queued before is dropped there, counted.
   */
  private linkOf(stationId: string): StationLink {
    const version = versionOf(this.connected.get(stationId) ?? this.messages.protocolOf(stationId));
    const existing = this.links.get(stationId);
    if (existing?.protocol === version.protocol) return existing;
    if (existing) void existing.close();
    const log = this.log.child({ stationId });
    const { site, writer } = this.options;
    const csmsCalls = this.fromCsms.get(version)!;
    // What the CSMS's calls become (a remote start the domain's, the rest the station's), the profile calls' too.
    const fromCsms = (action: string, params: unknown) => csmsCalls(stationId, action, params);
    const profileCalls: ProfileCallContext = {
      stationId,
      profiles: this.profiles,
      onCircuit: () => this.onCircuit(stationId),
      connectors: () => stationConnectors(this.options.config(), stationId),
      composites: (window: Window) => this.composites(stationId, window),
      relay: fromCsms,
      transactionIdOf: (stationTransactionId) =>
        site.transactions.byStationTransactionId(stationId, stationTransactionId)?.id,
      log,
      now: this.now,
    };
    const link = new StationLink(
      stationId,
      this.settings(stationId),
      this.messages,
      {
        bootInfo: () => version.bootInfo(writer.db, stationId, site.stations.bootInfo(stationId)),
        statuses: () => site.connectors.reported(stationId),
        relay: fromCsms,
        drained: () => this.closeIfIdle(stationId),
        chargingProfileCall: (action, params) => version.profileCall(profileCalls, action, params),
      },
      log,
      version.dialect(stationId, this.messages, log),
      { ...REAL_LINK_DEPS, ...(this.options.linkClock && { clock: this.options.linkClock }) },
    );
    this.links.set(stationId, link);
    link.open();
    return link;
  }

  /** Read from the config at each call: a reload that puts a charge point on a circuit applies at once. */
  private onCircuit(stationId: string): boolean {
    return this.options.config().sites.some((site) => {
      const chargePoints = site.stations.find((s) => s.id === stationId)?.chargePoints ?? [];
      return site.circuits.some((c) => c.chargePoints.some((id) => chargePoints.some((cp) => cp.id === id)));
    });
  }

  /** A link stays open while its station is connected or its queue holds messages (a backlog after a restart). */
  private closeIfIdle(stationId: string): void {
    const link = this.links.get(stationId);
    if (!link || this.connected.has(stationId) || link.backlog) return;
    this.links.delete(stationId);
    void link.close();
    this.log.info({ stationId }, 'uplink closed: station gone and nothing left to send');
  }

  private settings(stationId: string): LinkSettings {
    const { csms, tls, maxMessageBytes, timeoutMs } = this.linkedWith;
    return {
      url: csms.url,
      securityProfile: csms.securityProfile,
      password: () => this.options.upstreamPassword(stationId),
      ...(tls && { tls }),
      maxMessageBytes,
      callTimeoutMs: timeoutMs,
      transactionMessageAttempts: csms.transactionMessageAttempts,
      transactionMessageRetryIntervalS: csms.transactionMessageRetryIntervalS,
      reconnectMs: RECONNECT_MS,
    };
  }

  /** docs/operating/index.md#operating, metrics: per station, read from the same status as /health at each scrape. */
  private registerMetrics(registry: Registry): void {
    const perStation = (name: string, help: string, value: (s: UplinkStationStatus, now: number) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['station'],
        registers: [registry],
        collect: () => {
          const gauge = registry.getSingleMetric(name) as Gauge;
          gauge.reset();
          const now = this.now().getTime();
          for (const s of this.status()) gauge.set({ station: s.stationId }, value(s, now));
        },
      });
    perStation('chargegate_upstream_connected', "1 while the station's uplink is accepted by the CSMS", (s) =>
      s.connected ? 1 : 0,
    );
    perStation(
      'chargegate_upstream_queued_messages',
      'Messages waiting in the station queue for the CSMS',
      (s) => s.queued,
    );
    perStation(
      'chargegate_upstream_oldest_queued_seconds',
      'Age of the oldest message waiting for the CSMS',
      (s, now) => (s.oldestQueuedAt === null ? 0 : Math.max(0, (now - new Date(s.oldestQueuedAt).getTime()) / 1000)),
    );
    perStation(
      'chargegate_upstream_dropped_messages',
      'Messages dropped for the CSMS (queue limit, refused every attempt, start dropped)',
      (s) => s.dropped,
    );
  }
}

/** The parts of a station's OCPP version: 1.6 for a station whose version is not known yet. */
function versionOf(protocol: string | undefined): UplinkVersion {
  return VERSIONS.get(protocol ?? OCPP16) ?? v16;
}
