import type { Registry } from 'prom-client';
import { modbusBusKey, sessionMeters, type Config, type MeterConfig } from '../config/index.js';
import { worstLevel, type HealthSource } from '../health/index.js';
import type { Logger } from '../log/index.js';
import type { Site } from '../site/index.js';
import type { Writer } from '../store/index.js';
import { ModbusBus, type BusStats } from './bus.js';
import { busSettingsOf, type BusSettings } from './bus-settings.js';
import { CircuitPoller, type CircuitMeterReading } from './circuit-poller.js';
import type { CircuitMeterHealth, MeterHealth } from './meter-health.js';
import { MeterPoller } from './meter-poller.js';
import {
  deleteMeter,
  loadDetector,
  saveDetector,
  saveMeters,
  storedMeterIds,
  type StoredDetector,
} from './meter-store.js';
import { MeterMetrics } from './metrics.js';
import { kWhToWh } from './reading.js';

export interface MeterServiceOptions {
  config: Config;
  site: Site;
  /** The daemon's writer: meter state commits with the domain's changes. */
  writer: Writer;
  logger: Logger;
  /** The daemon's registry; meter and bus series are added to it. */
  metrics?: Registry;
  now?: () => Date;
  /** How often meter health and energy baselines are written for `chargegate meter status` (another process). */
  flushIntervalMs?: number;
}

/** A type alias, not an interface, so it is a HealthSource report as it is (no copy needed). */
export type MetersReport = {
  status: MeterHealth['status'];
  meters: Record<string, MeterHealth | CircuitMeterHealth>;
  buses: Record<string, BusStats>;
};

/** How often the daemon flushes meter health and detector state by default. */
export const METER_FLUSH_MS = 2000;
/**
 * While only a meter's energy changes (a session charging), its stored baseline is refreshed at most this often:
 * flash wears with every small synced write, and only a meter leaving the config mid-session reads it back.
 */
export const METER_ENERGY_WRITE_MS = 300_000;

/**
 * Every configured meter's poller and the buses they share: session meters detect sessions, circuit meters tell
 * their readings to the listeners of onCircuitReading. reload(config) adds, removes and restarts only the meters
 * (and buses) whose config changed; the others keep polling undisturbed.
 */
export class MeterService {
  private readonly buses = new Map<string, { bus: ModbusBus; signature: string }>();
  private readonly pollers = new Map<string, { poller: MeterPoller | CircuitPoller; signature: string }>();
  private readonly circuitListeners = new Set<(reading: CircuitMeterReading) => void>();
  private readonly logger: Logger;
  private readonly metrics: MeterMetrics | undefined;
  private readonly now: () => Date;
  private readonly flushTimer: NodeJS.Timeout;
  /** Per meter: what the flush last wrote (its meaningful state, the energy baseline) and when. */
  private readonly flushed = new Map<string, { key: string; energyKWh: number | undefined; at: number }>();
  private queue: Promise<void> = Promise.resolve();
  private stopped = false;

  private constructor(private readonly options: MeterServiceOptions) {
    this.logger = options.logger.child({ component: 'modbus' });
    this.metrics = options.metrics && new MeterMetrics(options.metrics);
    this.now = options.now ?? (() => new Date());
    this.flushTimer = setInterval(() => this.flush(), options.flushIntervalMs ?? METER_FLUSH_MS);
    this.flushTimer.unref();
  }

  static async start(options: MeterServiceOptions): Promise<MeterService> {
    const service = new MeterService(options);
    try {
      await service.reload(options.config);
    } catch (err) {
      // The daemon stops only the parts it got back: close the buses and pollers already opened.
      await service.stop();
      throw err;
    }
    return service;
  }

  reload(config: Config): Promise<void> {
    return this.enqueue(async () => {
      if (!this.stopped) await this.apply(config);
    });
  }

  stop(): Promise<void> {
    return this.enqueue(async () => {
      if (this.stopped) return;
      this.stopped = true;
      clearInterval(this.flushTimer);
      this.flush();
      await this.retire([...this.pollers.keys()], [...this.buses.keys()]);
    });
  }

  /** Reloads and the stop run one at a time, in order; a failed one does not block the next. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  report(): MetersReport {
    const meters = Object.fromEntries([...this.pollers].map(([id, { poller }]) => [id, poller.health()]));
    const buses = Object.fromEntries([...this.buses].map(([key, { bus }]) => [key, bus.stats()]));
    return { status: worstLevel(Object.values(meters).map((m) => m.status)), meters, buses };
  }

  healthSource(): HealthSource {
    return { name: 'meters', report: () => this.report() };
  }

  /**
   * Calls listener with every good reading of a circuit meter, and once when one goes offline; returns what stops
   * it. A meter that leaves the config or restarts with a changed one tells nothing more until its first reading.
   */
  onCircuitReading(listener: (reading: CircuitMeterReading) => void): () => void {
    this.circuitListeners.add(listener);
    return () => this.circuitListeners.delete(listener);
  }

  /** The latest reading (or offline) of every circuit meter that has had a good reading. */
  circuitReadings(): CircuitMeterReading[] {
    return [...this.pollers.values()].flatMap(({ poller }) => {
      const latest = poller instanceof CircuitPoller ? poller.latest() : undefined;
      return latest ? [latest] : [];
    });
  }

  private async apply(config: Config): Promise<void> {
    const wanted = config.sites.flatMap((site) => site.meters.map((meter) => ({ meter, siteId: site.id })));
    const busSettings = busSettingsOf(wanted.map((w) => w.meter.connection));
    const busSignature = (s: BusSettings) => JSON.stringify(s);
    const meterSignature = (meter: MeterConfig, siteId: string) =>
      JSON.stringify({ meter, siteId, bus: busSettings.get(modbusBusKey(meter.connection)) });
    const staleBuses = [...this.buses]
      .filter(([key, b]) => {
        const s = busSettings.get(key);
        return !s || busSignature(s) !== b.signature;
      })
      .map(([key]) => key);
    const stalePollers = [...this.pollers]
      .filter(([id, p]) => {
        const w = wanted.find((x) => x.meter.id === id);
        return !w || meterSignature(w.meter, w.siteId) !== p.signature;
      })
      .map(([id]) => id);
    // A meter that leaves, or changes role, leaves series its successor would not update (energy, session).
    const leaving = stalePollers.filter(
      (id) => wanted.find((w) => w.meter.id === id)?.meter.role !== this.pollers.get(id)!.poller.meter.role,
    );
    await this.retire(stalePollers, staleBuses);
    for (const id of leaving) this.metrics?.forget(id);
    // A session meter turned into a circuit meter leaves its sessions like a removed meter.
    this.closeOrphanSessions(new Set(config.sites.flatMap((site) => sessionMeters(site).map((m) => m.id))));

    for (const [key, settings] of busSettings) {
      if (!this.buses.has(key))
        this.buses.set(key, {
          bus: new ModbusBus(settings, this.logger, this.metrics),
          signature: busSignature(settings),
        });
    }
    for (const { meter, siteId } of wanted) {
      if (this.pollers.has(meter.id)) continue;
      const bus = this.buses.get(modbusBusKey(meter.connection))!.bus;
      const poller = this.pollerOf(meter, siteId, bus);
      this.pollers.set(meter.id, { poller, signature: meterSignature(meter, siteId) });
      poller.start();
      this.logger.info(
        {
          meter: meter.id,
          role: meter.role,
          model: meter.model,
          bus: bus.settings.key,
          unitId: meter.connection.unitId,
        },
        'polling meter',
      );
    }
  }

  private pollerOf(meter: MeterConfig, siteId: string, bus: ModbusBus): MeterPoller | CircuitPoller {
    const polling = { bus, logger: this.logger, ...(this.metrics && { metrics: this.metrics }), now: this.now };
    if (meter.role === 'circuit')
      return new CircuitPoller({ meter, ...polling, onReading: (reading) => this.tellCircuitReading(reading) });
    return new MeterPoller({ meter, siteId, site: this.options.site, db: this.options.writer.db, ...polling });
  }

  private tellCircuitReading(reading: CircuitMeterReading): void {
    for (const listener of this.circuitListeners) {
      try {
        listener(reading);
      } catch (err) {
        // One listener's bug must cost neither the others their reading nor the meter its polling.
        this.logger.error({ err, meter: reading.meterId }, 'circuit reading listener failed');
      }
    }
  }

  /**
   * Stops pollers, closes buses (queued requests fail at once), and keeps each stopped session meter's detector state.
   */
  private async retire(meterIds: string[], busKeys: string[]): Promise<void> {
    const pollers = meterIds.map((id) => this.pollers.get(id)!.poller);
    for (const poller of pollers) poller.halt();
    await Promise.all(busKeys.map((key) => this.buses.get(key)!.bus.close()));
    await Promise.all(pollers.map((p) => p.finished()));
    const sessionPollers = pollers.filter((p) => p instanceof MeterPoller);
    if (sessionPollers.length > 0)
      this.options.writer.writeNow(() => {
        for (const poller of sessionPollers)
          saveDetector(this.options.writer.db, poller.meter.id, poller.snapshot(), this.now());
      });
    for (const id of meterIds) {
      this.pollers.delete(id);
      this.flushed.delete(id);
    }
    for (const key of busKeys) this.buses.delete(key);
  }

  /**
   * A meter removed from the config can never stop its session: it is closed with reason Other at the meter's last
   * good energy, and the meter's state is forgotten.
   */
  private closeOrphanSessions(configured: ReadonlySet<string>): void {
    const { site, writer } = this.options;
    for (const open of site.transactions.open()) {
      if (open.source !== 'modbus' || configured.has(open.stationId)) continue;
      const baseline = loadDetector(writer.db, open.stationId)?.baseline;
      const meterStopWh = baseline ? Math.max(open.meterStartWh, kWhToWh(baseline.energyKWh)) : open.meterStartWh;
      site.transactions.stop({
        stationId: open.stationId,
        transactionId: open.id,
        meterStopWh,
        stoppedAt: baseline?.at ?? this.now(),
        reason: 'Other',
      });
      this.logger.warn(
        { meter: open.stationId, transactionId: open.id, meterStopWh },
        'meter left the config during a session; session closed with reason Other',
      );
    }
    for (const meterId of storedMeterIds(writer.db)) if (!configured.has(meterId)) deleteMeter(writer, meterId);
  }

  /**
   * Writes a meter's state when it changed meaningfully (detector phase, health level, online, error), or when its
   * energy moved and the last write is METER_ENERGY_WRITE_MS old. Counters, timestamps and live readings stay in
   * memory (GET /status.json, `meter status`): an idle site writes nothing.
   */
  private flush(): void {
    const sessionPollers = [...this.pollers.values()].flatMap(({ poller }) =>
      poller instanceof MeterPoller ? [poller] : [],
    );
    if (sessionPollers.length === 0) return;
    const now = this.now().getTime();
    const due: Array<{ meterId: string; detector: StoredDetector; health: MeterHealth; key: string }> = [];
    for (const poller of sessionPollers) {
      const meterId = poller.meter.id;
      const detector = poller.snapshot();
      const health = poller.health();
      const key = JSON.stringify([detector.state, health.status, health.online, health.lastError ?? null]);
      const last = this.flushed.get(meterId);
      const energyMoved =
        last !== undefined && detector.baseline?.energyKWh !== last.energyKWh && now - last.at >= METER_ENERGY_WRITE_MS;
      if (last?.key === key && !energyMoved) continue;
      due.push({ meterId, detector, health, key });
    }
    if (due.length === 0) return;
    try {
      saveMeters(this.options.writer, due, this.now());
      for (const { meterId, detector, key } of due)
        this.flushed.set(meterId, { key, energyKWh: detector.baseline?.energyKWh, at: now });
    } catch (err) {
      this.logger.error({ err }, 'could not write meter health');
    }
  }
}
