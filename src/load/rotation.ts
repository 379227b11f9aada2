import type { Limit } from './circuit-load.js';
import type { ConnectorFacts, ConnectorMemory, QueuePlace } from './types.js';

/** docs/configuration/circuits.md#circuits-load-management: a connector left waiting is rotated in at least this often. */
const ROTATION_MS = 15 * 60 * 1000;

/** The three places in the queue, first served first. */
const OVERDUE = 0;
const IN_TURN = 1;
const QUEUED = 2;
/** Of a waiting connector and a served one queued at the same moment, the waiting one goes first. */
const WAITING_FIRST = -Number.MAX_SAFE_INTEGER;

/**
 * The order in which connectors are admitted this step, who is within a turn, and how long each one's turn lasts.
 *
 * A turn is half of ROTATION_MS times the share of connectors that were served on the most crowded limit a
 * connector is on: with k of n served on one limit, each waits (n - k) / k turns, half of ROTATION_MS. The other
 * half is for what counting one limit misses: a three-phase connector takes a place on three phase limits at once,
 * turns end at a step rather than on time, what is set aside for one waiting stays idle until it fits.
 *
 * First come those that have waited ROTATION_MS already (longest first), then those within their turn (the most
 * recently admitted first, should the headroom shrink), then everyone else in the order they joined the queue: a
 * waiting connector when it began waiting, a served one whose turn is over when that turn ended (of two at once,
 * the one served for less time first).
 */
export function servingOrder(
  sharing: readonly ConnectorFacts[],
  memory: Readonly<Record<string, ConnectorMemory>>,
  limits: readonly Limit[],
  atMs: number,
): { ordered: ConnectorFacts[]; inTurn: ReadonlySet<string>; turnMs: ReadonlyMap<string, number> } {
  const placeOf = (k: ConnectorFacts): QueuePlace => memory[k.id]?.place ?? { served: false, sinceMs: atMs };
  const servedShare = limits.map(
    (l) => [...l.weights.keys()].filter((id) => memory[id]?.place.served === true).length / l.weights.size,
  );
  const turnMs = new Map(
    sharing.map((k) => [
      k.id,
      (ROTATION_MS / 2) * Math.min(1, ...limits.flatMap((l, i) => (l.weights.has(k.id) ? [servedShare[i] ?? 1] : []))),
    ]),
  );
  const rank = (k: ConnectorFacts): [number, number, number] => {
    const place = placeOf(k);
    if (!place.served)
      return atMs - place.sinceMs >= ROTATION_MS ? [OVERDUE, place.sinceMs, 0] : [QUEUED, place.sinceMs, WAITING_FIRST];
    const turnEndsMs = place.turnSinceMs + (turnMs.get(k.id) ?? ROTATION_MS);
    return atMs < turnEndsMs ? [IN_TURN, -place.sinceMs, 0] : [QUEUED, turnEndsMs, -place.sinceMs];
  };
  const ranked = sharing.map((k) => ({ k, rank: rank(k) }));
  ranked.sort((a, b) => a.rank[0] - b.rank[0] || a.rank[1] - b.rank[1] || a.rank[2] - b.rank[2]);
  return {
    ordered: ranked.map((r) => r.k),
    inTurn: new Set(ranked.filter((r) => r.rank[0] === IN_TURN).map((r) => r.k.id)),
    turnMs,
  };
}

/** Where a connector stands after this step: a served one whose turn ended and was admitted again starts a new turn. */
export function nextPlace(
  previous: QueuePlace | undefined,
  admitted: boolean,
  turnMs: number,
  atMs: number,
): QueuePlace {
  if (!admitted) return previous && !previous.served ? previous : { served: false, sinceMs: atMs };
  if (!previous?.served) return { served: true, sinceMs: atMs, turnSinceMs: atMs };
  return atMs >= previous.turnSinceMs + turnMs ? { ...previous, turnSinceMs: atMs } : previous;
}
