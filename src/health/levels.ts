/** Health levels of GET /health (docs/operating/index.md#operating), worst first when combined. */
export type HealthLevel = 'ok' | 'warning' | 'critical';

const RANK: Record<HealthLevel, number> = { ok: 0, warning: 1, critical: 2 };

export function worstLevel(levels: Iterable<HealthLevel>): HealthLevel {
  let worst: HealthLevel = 'ok';
  for (const level of levels) if (RANK[level] > RANK[worst]) worst = level;
  return worst;
}

/** A part of the daemon that reports on GET /health under its own key (e.g. `webhooks`, `meters`). */
export interface HealthSource {
  name: string;
  report(): { status: HealthLevel } & Record<string, unknown>;
}
