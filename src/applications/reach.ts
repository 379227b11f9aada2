import type { Config, GroupConfig, Permission } from '../config/index.js';

/** Where a charge point sits in the tenant hierarchy: company > site > station > charge point. */
export interface ChargePointLocation {
  siteId: string;
  stationId: string;
  chargePointId: string;
}

type ScopeLevel = 'company' | 'site' | 'station' | 'chargePoint';

/** One permission over one node of the hierarchy, from a group. */
export interface Grant {
  groupId: string;
  permission: Permission;
  level: ScopeLevel;
  target: string;
}

function parseScope(scope: string): { level: ScopeLevel; target: string } {
  const at = scope.indexOf(':');
  return { level: scope.slice(0, at) as ScopeLevel, target: scope.slice(at + 1) };
}

/** The grants of an application's groups as the config defines them now; groups gone from the config grant nothing. */
export function grantsOf(config: Config, groupIds: readonly string[]): Grant[] {
  const groups = new Map<string, GroupConfig>(config.groups.map((g) => [g.id, g]));
  return groupIds.flatMap((id) => {
    const group = groups.get(id);
    if (!group) return [];
    const { level, target } = parseScope(group.scope);
    return group.permissions.map((permission) => ({ groupId: id, permission, level, target }));
  });
}

/** The OAuth `scope` of a token: the distinct permissions the groups grant, space-separated (RFC 6749 3.3). */
export function scopeOf(grants: readonly Grant[]): string {
  return [...new Set(grants.map((g) => g.permission))].sort().join(' ');
}

/** A grant covers its node and everything below it. */
function covers(grant: Grant, companyId: string, at: ChargePointLocation): boolean {
  switch (grant.level) {
    case 'company':
      return grant.target === companyId;
    case 'site':
      return grant.target === at.siteId;
    case 'station':
      return grant.target === at.stationId;
    case 'chargePoint':
      return grant.target === at.chargePointId;
  }
}

export function reaches(
  grants: readonly Grant[],
  permission: Permission,
  companyId: string,
  at: ChargePointLocation,
): boolean {
  return grants.some((g) => g.permission === permission && covers(g, companyId, at));
}

/**
 * Whether a grant covers a whole site (a company or site scope): what site-wide facts such as its circuits need, since
 * they show every charge point on the site.
 */
export function reachesSite(
  grants: readonly Grant[],
  permission: Permission,
  companyId: string,
  siteId: string,
): boolean {
  return grants.some(
    (g) =>
      g.permission === permission &&
      ((g.level === 'company' && g.target === companyId) || (g.level === 'site' && g.target === siteId)),
  );
}

/**
 * Whether a grant covers a whole station (a company, site or station scope): a station's operations act on every
 * charge point it has, so a grant on one charge point does not reach them. A station not yet in a site (unknown,
 * pending) is reached by a company grant only.
 */
export function reachesStation(
  grants: readonly Grant[],
  permission: Permission,
  companyId: string,
  station: { id: string; siteId: string | null },
): boolean {
  return grants.some(
    (g) =>
      g.permission === permission &&
      ((g.level === 'company' && g.target === companyId) ||
        (g.level === 'site' && g.target === station.siteId) ||
        (g.level === 'station' && g.target === station.id)),
  );
}

/** The ids a location must match one of (any field) to be reached: what a query filters on. */
export interface ReachedIds {
  siteIds: string[];
  stationIds: string[];
  chargePointIds: string[];
}

/**
 * What reaches() admits for one permission, as ids a query can filter on instead of testing each row: a grant on
 * this company reaches everything; otherwise a location is reached when its site, station or charge point is
 * among the ids granted (none: nothing is).
 */
export function reachScope(
  grants: readonly Grant[],
  permission: Permission,
  companyId: string,
): 'everything' | ReachedIds {
  const ids: ReachedIds = { siteIds: [], stationIds: [], chargePointIds: [] };
  for (const g of grants) {
    if (g.permission !== permission) continue;
    switch (g.level) {
      case 'company':
        if (g.target === companyId) return 'everything';
        break;
      case 'site':
        ids.siteIds.push(g.target);
        break;
      case 'station':
        ids.stationIds.push(g.target);
        break;
      case 'chargePoint':
        ids.chargePointIds.push(g.target);
        break;
    }
  }
  return ids;
}
