import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { planReload } from '../../src/service/index.js';

const running = parseConfig(`
dataDir: /var/lib/chargegate
http: { host: 127.0.0.1, port: 8080 }
ocpp: { host: 127.0.0.1, port: 9000, securityProfile: 0 }
sites: [{ id: s1 }]
`);

describe('planReload', () => {
  it('applies everything but the start-bound keys, which keep their running values and are named', () => {
    const next = parseConfig(`
dataDir: /srv/elsewhere
log: { level: debug }
http: { host: 0.0.0.0, port: 8081 }
ocpp: { host: 127.0.0.1, port: 9000, securityProfile: 0, heartbeatIntervalS: 60 }
sites: [{ id: s1, webhooks: [{ id: partner-a, url: "http://127.0.0.1:7000/webhook/events" }] }]
`);
    const plan = planReload(running, next);
    expect(plan.restartRequired).toEqual(['dataDir', 'http.host', 'http.port', 'http.issuer']);
    expect(plan.config.dataDir).toBe('/var/lib/chargegate');
    expect(plan.config.http).toMatchObject({ host: '127.0.0.1', port: 8080, issuer: 'http://127.0.0.1:8080' });
    expect(plan.config.log.level).toBe('debug');
    expect(plan.config.ocpp.heartbeatIntervalS).toBe(60);
    expect(plan.config.sites[0]!.webhooks.map((w) => w.id)).toEqual(['partner-a']);
  });

  it('needs no restart when only reloadable keys changed, circuits and load management among them', () => {
    const next = parseConfig(`
dataDir: /var/lib/chargegate
http: { host: 127.0.0.1, port: 8080 }
ocpp: { host: 127.0.0.1, port: 9000, securityProfile: 0, acceptUnknownStations: true }
sites: [{ id: s1, stations: [{ id: CP1, chargePoints: [{ id: CP1-A, connectors: [1] }] }], circuits: [{ id: main, maxCurrentA: 40, chargePoints: [CP1-A] }] }, { id: s2 }]
loadManagement: { raiseAfterS: 10 }
`);
    const plan = planReload(running, next);
    expect(plan.restartRequired).toEqual([]);
    expect(plan.config).toEqual(next);
  });
});
