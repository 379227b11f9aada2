import { FirmwareError } from './errors.js';

/**
 * The stations a rollout request names: every station of its site, or the ones it lists (in that order, each once),
 * each one the site knows; a FirmwareError ('invalid') otherwise.
 */
export function stationsOf(
  known: ReadonlyArray<{ id: string; siteId: string | null }>,
  request: { stationIds?: string[]; siteId?: string },
): string[] {
  if (request.siteId !== undefined) {
    const ids = known.filter((s) => s.siteId === request.siteId).map((s) => s.id);
    if (ids.length === 0) throw new FirmwareError(`siteId: no station at site "${request.siteId}"`, 'invalid');
    return ids;
  }
  const ids = [...new Set(request.stationIds ?? [])];
  if (ids.length === 0) throw new FirmwareError('give the stations (stationIds, --station) or a site', 'invalid');
  const unknown = ids.filter((id) => !known.some((s) => s.id === id));
  if (unknown.length > 0) throw new FirmwareError(`stationIds: unknown station ${unknown.join(', ')}`, 'invalid');
  return ids;
}
