import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { siteCircuitsSchema } from '../../src/http/api-schemas.js';
import type { LoadStatus } from '../../src/load/index.js';
import { METER_MODELS } from '../../src/modbus/index.js';
import type { StatusSnapshot } from '../../src/status-page/index.js';
import { apiDaemonForTest, type ApiDaemon } from '../http/api-harness.js';
import { runCli, runCliJson } from '../support/cli.js';
import { PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { tempSiteForTest } from '../support/for-test.js';
import { freePort } from '../support/free-port.js';
import { MeterSimulator } from '../support/meter-simulator.js';
import { FAST_LOAD, meteredCircuitSite, OFFLINE_AFTER_S } from './metered-circuit.js';

/**
 * A step runs at least every second and the meter is polled every 200 ms, so every change shows within about 2 s; the
 * margin is for a loaded machine, where a station's answer can miss the 500 ms call timeout and be sent again.
 */
const WITHIN_MS = 10_000;

const GROUPS = [
  { id: 'ops', scope: 'company:acme', permissions: ['charge-points:read'] },
  { id: 'viewer-s2', scope: 'site:s2', permissions: ['charge-points:read'] },
  { id: 'station-cp001', scope: 'station:CP001', permissions: ['charge-points:read'] },
  { id: 'events-only', scope: 'company:acme', permissions: ['events:read'] },
];

/** A second site without circuits. */
const S2 = {
  id: 's2',
  stations: [{ id: 'CP003', chargePoints: [{ id: 'CP003-A', connectors: [1] }] }],
  meters: [],
  webhooks: [],
};

/** The load management series of GET /metrics, one line each, sorted. */
async function loadMetrics(api: ApiDaemon): Promise<string[]> {
  const text = await (await fetch(`${api.baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => /^chargegate_(circuit|connector)_/.test(line))
    .sort();
}

async function statusJson(api: ApiDaemon): Promise<StatusSnapshot> {
  return (await (await fetch(`${api.baseUrl}/status.json`)).json()) as StatusSnapshot;
}

const connectorStates = (chargePoint: string, now: string): string[] =>
  ['sharing', 'waiting', 'failsafe', 'uncontrolled', 'idle'].map(
    (state) =>
      `chargegate_connector_state{chargePoint="${chargePoint}",connector="1",state="${state}"} ${state === now ? 1 : 0}`,
  );

describe('seeing load management (docs/configuration/circuits.md#circuits-load-management)', () => {
  it(
    'GET /sites/{siteId}/circuits, /metrics, status.json and `load status` show what the meter and the stations give; a reload takes circuits away',
    async () => {
      const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } });
      onTestFinished(() => sim.close());
      await sim.set(1, { energyKWh: 1, currentA: [5, 5, 5], powerW: 3_450 });
      const config = { sites: [meteredCircuitSite(sim.port), S2], groups: GROUPS, ...FAST_LOAD };
      const api = await apiDaemonForTest(config);
      const token = await api.token(api.createApp('ops'));
      const circuits = async (siteId = 's1') => {
        const { status, body } = await api.call('GET', `/sites/${siteId}/circuits`, { token });
        expect(status).toBe(200);
        return siteCircuitsSchema.parse(body);
      };

      // Before any car: each connector idle, nothing allowed.
      const idle = await circuits();
      expect(idle.connectors).toEqual([
        { chargePointId: 'CP001-A', connectorId: 1, stationId: 'CP001', circuitId: 'main', state: 'idle' },
        { chargePointId: 'CP002-A', connectorId: 1, stationId: 'CP002', circuitId: 'garage', state: 'idle' },
      ]);

      const [cp001, cp002] = [await api.connect('CP001'), await api.connect('CP002')];
      await cp001.boot();
      await cp002.boot();
      const first = await cp001.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
      const second = await cp002.startTransaction({ connectorId: 1, idTag: 'TAG-2' });
      // Each at its charge point's maxCurrentA: 35 A are left beside the 5 A of other load.
      await expect.poll(() => [cp001.limitA(1), cp002.limitA(1)], { timeout: WITHIN_MS }).toEqual([16, 10]);
      // The cars say what they draw, then the meter shows them beside 5, 7 and 6 A of other load.
      await cp001.reportDrawn(1);
      await cp002.reportDrawn(1);
      await sim.set(1, { currentA: [5 + 26, 7 + 26, 6 + 26] });
      await expect
        .poll(async () => (await circuits()).circuits[0]?.measuredA, { timeout: WITHIN_MS })
        .toEqual({
          L1: 31,
          L2: 33,
          L3: 32,
        });

      const body = await circuits();
      expect(body).toEqual({
        siteId: 's1',
        circuits: [
          {
            circuitId: 'main',
            maxCurrentA: 40,
            configuredMaxCurrentA: 40,
            meterId: 'grid',
            meter: 'ok',
            measuredA: { L1: 31, L2: 33, L3: 32 },
            otherA: { L1: 5, L2: 7, L3: 6 },
            headroomA: 33,
            allowedA: { L1: 26, L2: 26, L3: 26 },
          },
          {
            circuitId: 'garage',
            parent: 'main',
            maxCurrentA: 20,
            configuredMaxCurrentA: 20,
            meter: 'none',
            otherA: { L1: 0, L2: 0, L3: 0 },
            headroomA: 20,
            allowedA: { L1: 10, L2: 10, L3: 10 },
          },
        ],
        connectors: [
          {
            chargePointId: 'CP001-A',
            connectorId: 1,
            stationId: 'CP001',
            circuitId: 'main',
            state: 'sharing',
            allowedA: 16,
            drawnA: 16,
            transactionId: first,
          },
          {
            chargePointId: 'CP002-A',
            connectorId: 1,
            stationId: 'CP002',
            circuitId: 'garage',
            state: 'sharing',
            allowedA: 10,
            drawnA: 10,
            transactionId: second,
          },
        ],
      });

      // Who may see it: a token, charge-points:read, and a group that reaches the whole site.
      const viewerS2 = await api.token(api.createApp('viewer-s2'));
      const answers = await Promise.all([
        api.call('GET', '/sites/s1/circuits'),
        api.call('GET', '/sites/s1/circuits', { token: await api.token(api.createApp('events-only')) }),
        api.call('GET', '/sites/s1/circuits', { token: viewerS2 }),
        api.call('GET', '/sites/s1/circuits', { token: await api.token(api.createApp('station-cp001')) }),
        api.call('GET', '/sites/nope/circuits', { token }),
        api.call('GET', '/sites/s2/circuits', { token: viewerS2 }),
      ]);
      expect(answers.map((a) => [a.status, a.body.error])).toEqual([
        [401, 'unauthorized'],
        [403, 'insufficient_scope'],
        [403, 'forbidden'],
        [403, 'forbidden'],
        [404, 'not_found'],
        [200, undefined],
      ]);
      expect(answers[3].body.message).toBe(
        `site "s1" is outside the application's groups (circuits need a company or site scope)`,
      );
      // A site without circuits answers empty lists.
      expect(answers[5].body).toEqual({ siteId: 's2', circuits: [], connectors: [] });

      expect(await loadMetrics(api)).toEqual(
        [
          'chargegate_circuit_current_amperes{circuit="main",phase="L1"} 31',
          'chargegate_circuit_current_amperes{circuit="main",phase="L2"} 33',
          'chargegate_circuit_current_amperes{circuit="main",phase="L3"} 32',
          'chargegate_circuit_limit_amperes{circuit="main"} 40',
          'chargegate_circuit_limit_amperes{circuit="garage"} 20',
          'chargegate_circuit_headroom_amperes{circuit="main"} 33',
          'chargegate_circuit_headroom_amperes{circuit="garage"} 20',
          'chargegate_circuit_other_amperes{circuit="main",phase="L1"} 5',
          'chargegate_circuit_other_amperes{circuit="main",phase="L2"} 7',
          'chargegate_circuit_other_amperes{circuit="main",phase="L3"} 6',
          'chargegate_circuit_other_amperes{circuit="garage",phase="L1"} 0',
          'chargegate_circuit_other_amperes{circuit="garage",phase="L2"} 0',
          'chargegate_circuit_other_amperes{circuit="garage",phase="L3"} 0',
          'chargegate_circuit_meter_up{circuit="main"} 1',
          'chargegate_connector_allowed_amperes{chargePoint="CP001-A",connector="1"} 16',
          'chargegate_connector_allowed_amperes{chargePoint="CP002-A",connector="1"} 10',
          'chargegate_connector_drawn_amperes{chargePoint="CP001-A",connector="1"} 16',
          'chargegate_connector_drawn_amperes{chargePoint="CP002-A",connector="1"} 10',
          ...connectorStates('CP001-A', 'sharing'),
          ...connectorStates('CP002-A', 'sharing'),
        ].sort(),
      );

      // status.json has every site's circuits and connectors, each naming its site.
      const load = (await statusJson(api)).load;
      const expected: LoadStatus = {
        circuits: body.circuits.map((c) => ({ siteId: 's1', ...c })),
        connectors: body.connectors.map((k) => ({ siteId: 's1', ...k })),
      };
      expect(load).toEqual(expected);

      const [table, json] = await Promise.all([
        runCli(['load', 'status', '--config', api.temp.configPath]),
        runCliJson<LoadStatus>(['load', 'status', '--config', api.temp.configPath]),
      ]);
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(
        /^CIRCUIT\s+SITE\s+PARENT\s+LIMIT A\s+METER\s+MEASURED A L1\/L2\/L3\s+OTHER A\s+ALLOWED A\s+HEADROOM A$/m,
      );
      expect(table.stdout).toMatch(
        /^main\s+s1\s+-\s+40\.0\s+grid ok\s+31\.0\/33\.0\/32\.0\s+5\.0\/7\.0\/6\.0\s+26\.0\/26\.0\/26\.0\s+33\.0$/m,
      );
      expect(table.stdout).toMatch(
        /^garage\s+s1\s+main\s+20\.0\s+-\s+-\s+0\.0\/0\.0\/0\.0\s+10\.0\/10\.0\/10\.0\s+20\.0$/m,
      );
      expect(table.stdout).toMatch(/^CONNECTOR\s+STATION\s+CIRCUIT\s+STATE\s+ALLOWED A\s+DRAWN A\s+TRANSACTION$/m);
      expect(table.stdout).toMatch(
        new RegExp(`^CP001-A/1\\s+CP001\\s+main\\s+sharing\\s+16\\.0\\s+16\\.0\\s+${first}$`, 'm'),
      );
      expect(table.stdout).toMatch(
        new RegExp(`^CP002-A/1\\s+CP002\\s+garage\\s+sharing\\s+10\\.0\\s+10\\.0\\s+${second}$`, 'm'),
      );
      expect(json.code).toBe(0);
      expect(json.data).toEqual(expected);

      // The meter lost: both connectors below it on the fail-safe, its series say so.
      await sim.setOnline(1, false);
      await expect
        .poll(async () => (await circuits()).connectors.map((k) => [k.state, k.allowedA]), {
          timeout: (OFFLINE_AFTER_S + 3) * 1000,
        })
        .toEqual([
          ['failsafe', 6],
          ['failsafe', 6],
        ]);
      const [main] = (await circuits()).circuits;
      // Nothing measured: what is left beside the two fail-safes.
      expect(main).toMatchObject({ meter: 'lost', otherA: { L1: 0, L2: 0, L3: 0 }, headroomA: 40 - 6 - 6 });
      expect(main).not.toHaveProperty('measuredA');
      const lost = await loadMetrics(api);
      expect(lost).toContain('chargegate_circuit_meter_up{circuit="main"} 0');
      expect(lost).toContain('chargegate_connector_allowed_amperes{chargePoint="CP001-A",connector="1"} 6');
      expect(lost).toContain('chargegate_connector_state{chargePoint="CP002-A",connector="1",state="failsafe"} 1');
      expect(lost.filter((line) => line.startsWith('chargegate_circuit_current_amperes'))).toEqual([]);

      // SIGHUP without the garage: its circuit and connector leave the API and the metrics at once.
      const port = api.daemon.httpPort;
      const withCircuits = (site: Record<string, unknown>) => ({
        ...config,
        http: { host: '127.0.0.1', port },
        sites: [site, S2],
      });
      const s1 = meteredCircuitSite(sim.port);
      api.temp.write(withCircuits({ ...s1, circuits: [(s1.circuits as unknown[])[0]] }));
      expect(await api.daemon.reload()).toBe(true);
      expect((await circuits()).circuits.map((c) => c.circuitId)).toEqual(['main']);
      const reloaded = await loadMetrics(api);
      expect(reloaded.filter((line) => /garage|CP002-A/.test(line))).toEqual([]);
      expect(reloaded).toContain('chargegate_circuit_limit_amperes{circuit="main"} 40');

      // No circuits left: load management stops, and says so everywhere.
      api.temp.write(withCircuits({ ...s1, circuits: [] }));
      expect(await api.daemon.reload()).toBe(true);
      expect(await circuits()).toEqual({ siteId: 's1', circuits: [], connectors: [] });
      expect(await loadMetrics(api)).toEqual([]);
      expect((await statusJson(api)).load).toBeNull();
      const off = await runCli(['load', 'status', '--config', api.temp.configPath]);
      expect(off.code).toBe(0);
      expect(off.stdout).toBe('no circuits in the config: load management is off\n');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    '`load status` without a daemon it can read: exit 1 saying why',
    async () => {
      const none = tempSiteForTest();
      const silent = tempSiteForTest();
      const tls = tempSiteForTest({ http: { host: '127.0.0.1', port: 0, tls: { cert: 'gw.crt', key: 'gw.key' } } });
      // A holder file of a process that lives (this one) on a port where nothing listens: a daemon gone deaf.
      const port = await freePort();
      for (const { dataDir } of [silent, tls]) {
        mkdirSync(dataDir);
        writeFileSync(
          path.join(dataDir, 'chargegate.pid'),
          JSON.stringify({ pid: process.pid, since: new Date().toISOString(), httpPort: port }),
        );
      }
      const [noDaemon, deaf, https] = await Promise.all([
        runCli(['load', 'status', '--config', none.configPath]),
        runCli(['load', 'status', '--config', silent.configPath]),
        runCli(['load', 'status', '--config', tls.configPath]),
      ]);
      expect(noDaemon.code).toBe(1);
      expect(noDaemon.stderr).toBe(
        `chargegate: cannot show the load status: no chargegate is running on ${none.dataDir}\n`,
      );
      expect(deaf.code).toBe(1);
      expect(deaf.stderr).toBe(
        `chargegate: cannot show the load status: the chargegate on ${silent.dataDir} (pid ${process.pid}) does not answer at http://127.0.0.1:${port}/status.json: ECONNREFUSED\n`,
      );
      expect(https.code).toBe(1);
      expect(https.stderr).toBe(
        'chargegate: cannot show the load status: with http.tls the daemon serves status.json over HTTPS only, which this command does not read\n',
      );
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
