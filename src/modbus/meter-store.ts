import { statement, type Database, type Writer } from '../store/index.js';
import type { DetectorState } from './detector.js';
import type { MeterHealth } from './meter-health.js';
import type { EnergyBaseline } from './reading.js';

/** What a meter's poller keeps across restarts (migration 5, table meter_detectors). */
export interface StoredDetector {
  state: DetectorState;
  baseline?: EnergyBaseline;
  lastGoodAt?: Date;
}

interface DetectorRow {
  meter_id: string;
  phase: DetectorState['phase'];
  phase_since: string | null;
  candidate_energy_wh: number | null;
  transaction_id: number | null;
  last_energy_wh: number | null;
  last_good_at: string | null;
}

export function loadDetector(db: Database, meterId: string): StoredDetector | undefined {
  const row = statement<[string], DetectorRow>(db, 'SELECT * FROM meter_detectors WHERE meter_id = ?').get(meterId);
  if (!row) return undefined;
  const lastGoodAt = row.last_good_at ? new Date(row.last_good_at) : undefined;
  return {
    state: {
      phase: row.phase,
      ...(row.phase_since !== null && { since: new Date(row.phase_since) }),
      ...(row.candidate_energy_wh !== null && { candidateEnergyWh: row.candidate_energy_wh }),
      ...(row.transaction_id !== null && { transactionId: row.transaction_id }),
    },
    ...(row.last_energy_wh !== null &&
      lastGoodAt && { baseline: { energyKWh: row.last_energy_wh / 1000, at: lastGoodAt } }),
    ...(lastGoodAt && { lastGoodAt }),
  };
}

/** Writes a meter's detector state; run on every phase change and with the periodic health flush. */
export function saveDetector(db: Database, meterId: string, stored: StoredDetector, now: Date): void {
  const { state, baseline, lastGoodAt } = stored;
  statement(
    db,
    `INSERT INTO meter_detectors (meter_id, phase, phase_since, candidate_energy_wh, transaction_id, last_energy_wh, last_good_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (meter_id) DO UPDATE SET phase = excluded.phase, phase_since = excluded.phase_since, candidate_energy_wh = excluded.candidate_energy_wh,
       transaction_id = excluded.transaction_id, last_energy_wh = excluded.last_energy_wh, last_good_at = excluded.last_good_at, updated_at = excluded.updated_at`,
  ).run(
    meterId,
    state.phase,
    state.since?.toISOString() ?? null,
    state.candidateEnergyWh ?? null,
    state.transactionId ?? null,
    baseline ? baseline.energyKWh * 1000 : null,
    lastGoodAt?.toISOString() ?? null,
    now.toISOString(),
  );
}

/** The periodic flush: the given meters' detector and health in one transaction (one fsync, not one per meter). */
export function saveMeters(
  writer: Writer,
  meters: ReadonlyArray<{ meterId: string; detector: StoredDetector; health: MeterHealth }>,
  now: Date,
): void {
  if (meters.length === 0) return;
  const { db } = writer;
  const health = statement(
    db,
    'INSERT INTO meter_health (meter_id, report, updated_at) VALUES (?, ?, ?) ON CONFLICT (meter_id) DO UPDATE SET report = excluded.report, updated_at = excluded.updated_at',
  );
  writer.writeNow(() => {
    for (const m of meters) {
      saveDetector(db, m.meterId, m.detector, now);
      health.run(m.meterId, JSON.stringify(m.health), now.toISOString());
    }
  });
}

/** Meters the database holds state for, configured or not. */
export function storedMeterIds(db: Database): string[] {
  return db
    .prepare<[], string>('SELECT meter_id FROM meter_detectors UNION SELECT meter_id FROM meter_health')
    .pluck()
    .all();
}

/** Forgets a meter that left the config. */
export function deleteMeter(writer: Writer, meterId: string): void {
  writer.writeNow(() => {
    writer.db.prepare('DELETE FROM meter_detectors WHERE meter_id = ?').run(meterId);
    writer.db.prepare('DELETE FROM meter_health WHERE meter_id = ?').run(meterId);
  });
}

export interface StoredHealth {
  meterId: string;
  health: MeterHealth;
  updatedAt: Date;
}

/** The health the daemon last wrote, for `chargegate meter status` (another process). */
export function loadHealth(db: Database): StoredHealth[] {
  const rows = db
    .prepare<[], { meter_id: string; report: string; updated_at: string }>(
      'SELECT meter_id, report, updated_at FROM meter_health ORDER BY meter_id',
    )
    .all();
  return rows.map((r) => ({
    meterId: r.meter_id,
    health: JSON.parse(r.report) as MeterHealth,
    updatedAt: new Date(r.updated_at),
  }));
}
