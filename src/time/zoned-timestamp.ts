/**
 * Envelope timestamps (docs/partners/webhooks.md#receiving-webhooks-partners): the send time as wall-clock time in the configured IANA
 * zone, millisecond precision and a numeric offset, e.g. 2026-11-21T10:15:30.123+01:00. The offset comes from the zone
 * rules at that instant, so daylight-saving changes are right without any table of our own.
 */
export function formatZonedTimestamp(instant: Date, timeZone: string): string {
  const ms = instant.getTime();
  const offset = offsetMs(ms, timeZone);
  const wall = new Date(ms + offset);
  const offsetMinutes = Math.round(offset / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return (
    `${pad(wall.getUTCFullYear(), 4)}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}T${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}.${pad(wall.getUTCMilliseconds(), 3)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/**
 * The zone's offset from UTC at each UTC minute asked lately: the zone rules (Intl) cost ~10 us an instant, and every
 * transaction's event formats two or three (issue 47). Kept only for a minute whose first and last millisecond
 * have the same offset: a zone changes its offset at most once in a minute, so then every instant of it has that one.
 */
const offsets = new Map<string, Map<number, number>>();
const OFFSETS_KEPT = 64;

function offsetMs(ms: number, timeZone: string): number {
  let zone = offsets.get(timeZone);
  if (!zone) offsets.set(timeZone, (zone = new Map()));
  const minute = Math.floor(ms / 60_000);
  const kept = zone.get(minute);
  if (kept !== undefined) return kept;
  const first = offsetAt(minute * 60_000, timeZone);
  if (offsetAt(minute * 60_000 + 59_999, timeZone) !== first) return offsetAt(ms, timeZone);
  if (zone.size >= OFFSETS_KEPT) zone.clear();
  zone.set(minute, first);
  return first;
}

/** The wall clock minus UTC at the instant, in whole seconds as the zone rules give it. */
function offsetAt(ms: number, timeZone: string): number {
  const wall = wallClock(new Date(ms), timeZone);
  return (
    Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second) - Math.floor(ms / 1000) * 1000
  );
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

// Building an Intl formatter costs far more than using one; every request formats a timestamp.
const formatters = new Map<string, Intl.DateTimeFormat>();

function wallClock(instant: Date, timeZone: string): WallClock {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  const parts: Partial<Record<Intl.DateTimeFormatPartTypes, number>> = {};
  for (const part of formatter.formatToParts(instant))
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return {
    year: parts.year ?? 0,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}
