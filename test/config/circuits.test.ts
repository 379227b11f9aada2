import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { circuitTree, ConfigError, parseConfig } from '../../src/config/index.js';
import { runCli } from '../support/cli.js';
import { namedFence } from '../support/docs.js';
import { daemonForTest } from '../support/daemon.js';
import { tempSiteForTest } from '../support/for-test.js';

/** One site with a station CP001 (charge points CP001-A, CP001-B), a Modbus charge point MB-1 and a grid meter. */
const site = (more: string) => `sites:
  - id: s1
    stations:
      - id: CP001
        chargePoints: [{ id: CP001-A, connectors: [1] }, { id: CP001-B, connectors: [2] }]
    meters:
      - { id: mb1, chargePointId: MB-1, connectorId: 1, model: sdm120, connection: { type: tcp, host: 10.0.0.5, unitId: 2 } }
      - { id: grid, role: circuit, model: sdm630, connection: { type: tcp, host: 10.0.0.5, unitId: 1 } }
${more}`;

/** The example config docs/configuration/circuits.md#circuits-load-management prints. */
function readmeExample(): string {
  return namedFence('docs/configuration/circuits.md', 'circuits-example');
}

function problems(text: string): string[] {
  try {
    parseConfig(text);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('circuits (load management)', () => {
  it('manages nothing by default and fills in the defaults of the contract', () => {
    const plain = parseConfig(site(''));
    expect(plain.sites[0]!.circuits).toEqual([]);
    expect(plain.sites[0]!.chargePoints).toEqual([]);
    expect(plain.loadManagement).toEqual({ minCurrentA: 6, raiseAfterS: 5, profileValidityS: 300 });

    const config = parseConfig(
      site(`    chargePoints: [{ id: CP001-A }, { id: MB-1, maxCurrentA: 16, phases: 1, phase: L2 }]
    circuits:
      - { id: main, maxCurrentA: 63, chargePoints: [CP001-A] }
      - { id: garage, parent: main, maxCurrentA: 32, maxPowerW: 20000, meter: grid }`),
    );
    expect(config.sites[0]!.chargePoints).toEqual([
      { id: 'CP001-A', maxCurrentA: 32, phases: 3 },
      { id: 'MB-1', maxCurrentA: 16, phases: 1, phase: 'L2' },
    ]);
    expect(config.sites[0]!.circuits).toEqual([
      { id: 'main', maxCurrentA: 63, failsafeCurrentA: 6, chargePoints: ['CP001-A'] },
      {
        id: 'garage',
        parent: 'main',
        maxCurrentA: 32,
        maxPowerW: 20000,
        meter: 'grid',
        failsafeCurrentA: 6,
        chargePoints: [],
      },
    ]);
  });

  it('gives a child circuit its parent failsafeCurrentA unless it sets its own', () => {
    const config = parseConfig(
      site(`    circuits:
      - { id: garage, parent: main, maxCurrentA: 32 }
      - { id: main, maxCurrentA: 63, failsafeCurrentA: 10 }
      - { id: carport, parent: main, maxCurrentA: 32, failsafeCurrentA: 0 }
      - { id: bay-1, parent: carport, maxCurrentA: 16 }
      - { id: annex, maxCurrentA: 25 }`),
    );
    expect(Object.fromEntries(config.sites[0]!.circuits.map((c) => [c.id, c.failsafeCurrentA]))).toEqual({
      garage: 10,
      main: 10,
      carport: 0,
      'bay-1': 0,
      annex: 6,
    });
  });

  it('refuses charge points, meters and parents this site does not have, and one meter on two circuits, naming each key path', () => {
    expect(
      problems(
        site(`    chargePoints: [{ id: CP999 }]
    circuits:
      - { id: main, maxCurrentA: 63, meter: nowhere, chargePoints: [CP001-A, CP002-A] }
      - { id: sub, parent: nothing, maxCurrentA: 32, meter: mb1 }`),
      ),
    ).toEqual([
      'sites[0].chargePoints[0].id: no charge point "CP999" in this site',
      'sites[0].circuits[0].meter: no meter "nowhere" in this site',
      'sites[0].circuits[0].chargePoints[1]: no charge point "CP002-A" in this site',
      'sites[0].circuits[1].parent: no circuit "nothing" in this site',
      'sites[0].circuits[1].meter: meter "mb1" is role: session; a circuit needs a role: circuit meter',
    ]);
    expect(
      problems(
        site(
          '    circuits: [{ id: main, maxCurrentA: 63, meter: grid }, { id: sub, parent: main, maxCurrentA: 32, meter: grid }]',
        ),
      ),
    ).toEqual(['sites[0].circuits[1].meter: meter "grid" already measures circuit "main"']);
  });

  it('refuses a charge point or meter of another site', () => {
    const text = `${site('')}  - id: s2
    circuits: [{ id: other, maxCurrentA: 32, meter: grid, chargePoints: [MB-1] }]
`;
    expect(problems(text)).toEqual([
      'sites[1].circuits[0].meter: no meter "grid" in this site',
      'sites[1].circuits[0].chargePoints[0]: no charge point "MB-1" in this site',
    ]);
  });

  it('refuses a cycle of parents once, at its first circuit', () => {
    expect(
      problems(
        site(`    circuits:
      - { id: a, parent: c, maxCurrentA: 32 }
      - { id: b, parent: a, maxCurrentA: 32 }
      - { id: c, parent: b, maxCurrentA: 32 }
      - { id: d, parent: a, maxCurrentA: 32 }
      - { id: e, parent: e, maxCurrentA: 32 }`),
      ),
    ).toEqual([
      'sites[0].circuits[0].parent: a cycle: a -> c -> b -> a',
      'sites[0].circuits[4].parent: a cycle: e -> e',
    ]);
  });

  it('refuses a charge point in two circuits and duplicate circuit ids, also across sites', () => {
    const text = `${site(`    circuits:
      - { id: main, maxCurrentA: 63, chargePoints: [CP001-A, MB-1] }
      - { id: garage, parent: main, maxCurrentA: 32, chargePoints: [CP001-B, MB-1] }
      - { id: main, maxCurrentA: 40, chargePoints: [CP001-B] }`)}
  - id: s2
    circuits: [{ id: garage, maxCurrentA: 32 }]
`;
    expect(problems(text)).toEqual([
      'sites[0].circuits[1].chargePoints[1]: charge point "MB-1" is already in circuit "main"',
      'sites[0].circuits[2].id: duplicate circuit id "main"',
      'sites[0].circuits[2].chargePoints[0]: charge point "CP001-B" is already in circuit "garage"',
      'sites[1].circuits[0].id: duplicate circuit id "garage"',
    ]);
  });

  it('refuses a limit below loadManagement.minCurrentA and a failsafeCurrentA above its circuit limit, set or inherited', () => {
    expect(
      problems(
        site(`    circuits:
      - { id: main, maxCurrentA: 20, failsafeCurrentA: 16 }
      - { id: small, parent: main, maxCurrentA: 10 }
      - { id: tiny, parent: main, maxCurrentA: 7, failsafeCurrentA: 8 }
loadManagement: { minCurrentA: 8 }`),
      ),
    ).toEqual([
      'sites[0].circuits[1].failsafeCurrentA: 16 (inherited from circuit "main") is above maxCurrentA (10); set a lower one here',
      'sites[0].circuits[2].maxCurrentA: 7 is below loadManagement.minCurrentA (8)',
      'sites[0].circuits[2].failsafeCurrentA: 8 is above maxCurrentA (7)',
    ]);
  });

  it('refuses a single-phase charge point without its phase, and a phase on a three-phase one', () => {
    expect(
      problems(
        site('    chargePoints: [{ id: CP001-A, phases: 1 }, { id: CP001-B, phase: L1 }, { id: MB-1, phases: 2 }]'),
      ),
    ).toEqual([
      'sites[0].chargePoints[0].phase: required when phases is 1',
      'sites[0].chargePoints[1].phase: only allowed when phases is 1',
      'sites[0].chargePoints[2].phases: 1 or 3',
    ]);
    expect(problems(site('    chargePoints: [{ id: CP001-A }, { id: CP001-A, maxCurrentA: 16 }]'))).toEqual([
      'sites[0].chargePoints[1].id: duplicate id "CP001-A"',
    ]);
  });

  it('refuses loadManagement and circuit values out of bounds, and durations of 0', () => {
    const keys = problems(
      site(`    chargePoints: [{ id: CP001-A, maxCurrentA: 0 }]
    circuits: [{ id: main, maxCurrentA: 10001, maxPowerW: -1, failsafeCurrentA: -1 }]
loadManagement: { minCurrentA: 0, raiseAfterS: 0, profileValidityS: 86401 }`),
    ).map((p) => p.split(':')[0]);
    expect(keys).toEqual([
      'sites[0].chargePoints[0].maxCurrentA',
      'sites[0].circuits[0].maxCurrentA',
      'sites[0].circuits[0].maxPowerW',
      'sites[0].circuits[0].failsafeCurrentA',
      'loadManagement.minCurrentA',
      'loadManagement.raiseAfterS',
      'loadManagement.profileValidityS',
    ]);
    expect(problems(site('loadManagement: { minCurrentA: 80, raiseAfterS: 3600, profileValidityS: 86400 }'))).toEqual(
      [],
    );
  });

  it('resolves the circuit tree of a site with each charge point’s electrical facts', () => {
    const config = parseConfig(
      site(`    chargePoints: [{ id: MB-1, maxCurrentA: 16, phases: 1, phase: L3 }]
    circuits:
      - { id: garage, parent: main, maxCurrentA: 32, chargePoints: [MB-1] }
      - { id: main, maxCurrentA: 63, meter: grid, chargePoints: [CP001-A] }
      - { id: annex, maxCurrentA: 25 }`),
    );
    const tree = circuitTree(config.sites[0]!);
    expect(tree.map((n) => n.circuit.id)).toEqual(['main', 'annex']);
    const [main] = tree;
    expect(main!.chargePoints).toEqual([{ id: 'CP001-A', maxCurrentA: 32, phases: 3 }]);
    expect(main!.children.map((n) => n.circuit.id)).toEqual(['garage']);
    expect(main!.children[0]!.chargePoints).toEqual([{ id: 'MB-1', maxCurrentA: 16, phases: 1, phase: 'L3' }]);
    expect(main!.children[0]!.children).toEqual([]);
  });

  it('check-config exits 2 on a bad circuit naming the key path, and 0 on the example in docs/configuration/circuits.md', async () => {
    const temp = tempSiteForTest();
    writeFileSync(
      temp.configPath,
      `dataDir: ${temp.dataDir}\n${site('    circuits: [{ id: main, maxCurrentA: 63, chargePoints: [CP404] }]')}`,
    );
    const bad = await runCli(['check-config', '--config', temp.configPath]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      `${temp.configPath}: sites[0].circuits[0].chargePoints[0]: no charge point "CP404" in this site`,
    );
    writeFileSync(temp.configPath, `dataDir: ${temp.dataDir}\n${readmeExample()}`);
    const example = await runCli(['check-config', '--config', temp.configPath]);
    expect(example.stderr).toBe('');
    expect(example.code).toBe(0);
  });

  it('check-config exits 2 on a charge point whose maxCurrentA is below loadManagement.minCurrentA, naming the key path', async () => {
    const temp = tempSiteForTest();
    writeFileSync(
      temp.configPath,
      `dataDir: ${temp.dataDir}\n${site('    chargePoints: [{ id: CP001-A, maxCurrentA: 6 }, { id: MB-1, maxCurrentA: 4, phases: 1, phase: L1 }]')}`,
    );
    const bad = await runCli(['check-config', '--config', temp.configPath]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      `${temp.configPath}: sites[0].chargePoints[1].maxCurrentA: 4 is below loadManagement.minCurrentA (6): it could never be served`,
    );
    expect(bad.stderr).not.toContain('chargePoints[0]');
  });

  it('refuses a bad circuit at start with exit 2 and on SIGHUP, naming the key path', async () => {
    const station = { id: 'CP001', chargePoints: [{ id: 'CP001-A', connectors: [1, 2] }] };
    const circuits = (chargePoint: string) => ({
      sites: [
        { id: 's1', stations: [station], circuits: [{ id: 'main', maxCurrentA: 40, chargePoints: [chargePoint] }] },
      ],
    });
    const problem = 'sites[0].circuits[0].chargePoints[0]: no charge point "CP404" in this site';
    const temp = tempSiteForTest(circuits('CP404'));
    const start = await runCli(['run', '--config', temp.configPath]);
    expect(start.code).toBe(2);
    expect(start.stderr).toContain(problem);

    const t = await daemonForTest(circuits('CP001-A'));
    t.temp.write(circuits('CP404'));
    expect(await t.daemon.reload()).toBe(false);
    expect(t.logged('config reload refused; the running config stays')).toEqual([
      expect.objectContaining({ err: expect.stringContaining(problem) }),
    ]);
  }, 60_000);
});
