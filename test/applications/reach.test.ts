import { describe, expect, it } from 'vitest';
import { grantsOf, reaches, scopeOf } from '../../src/applications/index.js';
import { parseConfig } from '../../src/config/index.js';

const config = parseConfig(`
company: { id: acme }
sites:
  - id: north
    stations: [{ id: ST1, chargePoints: [{ id: CP1, connectors: [1] }, { id: CP2, connectors: [2] }] }]
  - id: south
    stations: [{ id: ST2, chargePoints: [{ id: CP3, connectors: [1] }] }]
groups:
  - { id: company, scope: "company:acme", permissions: [charge-points:read] }
  - { id: north, scope: "site:north", permissions: [charge-points:read, charge-points:control] }
  - { id: st2, scope: "station:ST2", permissions: [charge-points:control] }
  - { id: cp2, scope: "chargePoint:CP2", permissions: [charge-points:control] }
`);

const CP1 = { siteId: 'north', stationId: 'ST1', chargePointId: 'CP1' };
const CP2 = { siteId: 'north', stationId: 'ST1', chargePointId: 'CP2' };
const CP3 = { siteId: 'south', stationId: 'ST2', chargePointId: 'CP3' };

describe('group reach', () => {
  it('a grant covers its level and everything below it', () => {
    const reach = (groups: string[], permission: 'charge-points:read' | 'charge-points:control') =>
      [CP1, CP2, CP3]
        .filter((cp) => reaches(grantsOf(config, groups), permission, 'acme', cp))
        .map((cp) => cp.chargePointId);
    expect(reach(['company'], 'charge-points:read')).toEqual(['CP1', 'CP2', 'CP3']);
    expect(reach(['company'], 'charge-points:control')).toEqual([]);
    expect(reach(['north'], 'charge-points:control')).toEqual(['CP1', 'CP2']);
    expect(reach(['st2'], 'charge-points:control')).toEqual(['CP3']);
    expect(reach(['cp2'], 'charge-points:control')).toEqual(['CP2']);
    expect(reach(['cp2', 'st2'], 'charge-points:control')).toEqual(['CP2', 'CP3']);
  });

  it('a group no longer in the config grants nothing; the token scope lists the distinct permissions', () => {
    expect(grantsOf(config, ['gone'])).toEqual([]);
    expect(scopeOf(grantsOf(config, ['company', 'st2']))).toBe('charge-points:control charge-points:read');
    expect(scopeOf(grantsOf(config, ['company']))).toBe('charge-points:read');
  });
});
