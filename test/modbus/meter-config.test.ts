import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/index.js';
import { runCli } from '../support/cli.js';
import { tempSiteForTest } from '../support/for-test.js';

function problems(meters: string, stations = ''): string[] {
  try {
    parseConfig(`sites:\n  - id: s1\n${stations}    meters:\n${meters}`);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

const meter = (id: string, connection: string, extra = '') =>
  `      - { id: ${id}, chargePointId: cp-${id}, connectorId: 1, model: sdm630, connection: ${connection}${extra} }\n`;

describe('meter config', () => {
  it('gives serial meters the RTU pacing and TCP meters none by default', () => {
    const config = parseConfig(
      `sites:\n  - id: s1\n    meters:\n${meter('a', '{ type: rtu, device: /dev/ttyUSB0 }')}${meter('b', '{ type: tcp, host: 10.0.0.5 }')}`,
    );
    const [a, b] = config.sites[0]!.meters;
    expect(a!.connection).toEqual({
      type: 'rtu',
      device: '/dev/ttyUSB0',
      baudRate: 9600,
      parity: 'none',
      dataBits: 8,
      stopBits: 1,
      unitId: 1,
      timeoutMs: 1000,
      interRequestDelayMs: 100,
      unitChangeDelayMs: 200,
      reconnectMinMs: 1000,
      reconnectMaxMs: 10_000,
    });
    expect(b!.connection).toMatchObject({ port: 502, interRequestDelayMs: 0, unitChangeDelayMs: 0 });
    expect(a!.detection).toEqual({
      startCurrentA: 1,
      startDelayS: 10,
      stopCurrentA: 0.5,
      stopDelayS: 60,
      offlineAfterS: 30,
    });
  });

  it('refuses two meters with one unit id on one bus', () => {
    expect(
      problems(
        meter('a', '{ type: tcp, host: 10.0.0.5, unitId: 3 }') +
          meter('b', '{ type: tcp, host: 10.0.0.5, port: 502, unitId: 3 }'),
      ),
    ).toEqual(['sites[0].meters[1].connection.unitId: unit 3 on tcp://10.0.0.5:502 is already used by another meter']);
    expect(
      problems(
        meter('a', '{ type: tcp, host: 10.0.0.5, unitId: 3 }') + meter('b', '{ type: tcp, host: 10.0.0.6, unitId: 3 }'),
      ),
    ).toEqual([]);
  });

  it('refuses different serial settings on one serial bus, and two framings on one gateway port', () => {
    expect(
      problems(
        meter('a', '{ type: rtu, device: /dev/ttyUSB0, unitId: 1 }') +
          meter('b', '{ type: rtu, device: /dev/ttyUSB0, unitId: 2, baudRate: 19200, parity: even }'),
      ),
    ).toEqual([
      'sites[0].meters[1].connection: /dev/ttyUSB0 is already used at 9600 8N1; meters on one bus need the same serial settings',
    ]);
    expect(
      problems(
        meter('a', '{ type: tcp, host: gw, port: 4001 }') +
          meter('b', '{ type: rtuovertcp, host: gw, port: 4001, unitId: 2 }'),
      ),
    ).toEqual(['sites[0].meters[1].connection.type: gw:4001 is already used as tcp']);
  });

  it('refuses a meter id that is a station id, thresholds the wrong way round, and a backoff that shrinks', () => {
    expect(problems(meter('CP001', '{ type: tcp, host: h }'), '    stations: [{ id: CP001 }]\n')).toEqual([
      'sites[0].meters[0].id: "CP001" is already a station id',
    ]);
    expect(
      problems(meter('a', '{ type: tcp, host: h }', ', detection: { startCurrentA: 1, stopCurrentA: 2 }')),
    ).toEqual(['sites[0].meters[0].detection.stopCurrentA: must not exceed startCurrentA (1)']);
    expect(problems(meter('a', '{ type: tcp, host: h, reconnectMinMs: 5000, reconnectMaxMs: 1000 }'))).toEqual([
      'sites[0].meters[0].connection.reconnectMinMs: must not exceed reconnectMaxMs (1000)',
    ]);
  });

  it('refuses a start or stop delay of 0 as every other duration (docs/install/modbus-meters.md#modbus-meters)', () => {
    expect(problems(meter('a', '{ type: tcp, host: h }', ', detection: { startDelayS: 0, stopDelayS: 0 }'))).toEqual([
      'sites[0].meters[0].detection.startDelayS: Too small: expected number to be >0',
      'sites[0].meters[0].detection.stopDelayS: Too small: expected number to be >0',
    ]);
    expect(problems(meter('a', '{ type: tcp, host: h }', ', detection: { startDelayS: 0.05, stopDelayS: 1 }'))).toEqual(
      [],
    );
  });

  it('accepts a circuit meter without the session keys and refuses them on it; a meter without role is a session meter', () => {
    const circuitMeter = (extra = '') =>
      `      - { id: grid, role: circuit, model: sdm630, connection: { type: tcp, host: 10.0.0.5 }${extra} }\n`;
    const config = parseConfig(
      `sites:\n  - id: s1\n    meters:\n${meter('a', '{ type: tcp, host: 10.0.0.5, unitId: 2 }')}${circuitMeter()}`,
    );
    const [a, grid] = config.sites[0]!.meters;
    expect(a).toMatchObject({ role: 'session', chargePointId: 'cp-a', connectorId: 1 });
    expect(grid).toEqual({
      id: 'grid',
      role: 'circuit',
      model: 'sdm630',
      connection: expect.objectContaining({ type: 'tcp', host: '10.0.0.5', unitId: 1 }),
      pollIntervalMs: 1000,
      detection: { offlineAfterS: 30 },
    });
    expect(problems(circuitMeter(', chargePointId: X, connectorId: 1, idTag: T'))).toEqual([
      'sites[0].meters[0]: unknown keys "chargePointId", "connectorId", "idTag"',
    ]);
    expect(problems(circuitMeter(', detection: { startCurrentA: 2 }'))).toEqual([
      'sites[0].meters[0].detection: unknown key "startCurrentA"',
    ]);
    expect(problems('      - { id: g, role: grid, model: sdm630, connection: { type: tcp, host: h } }\n')).toEqual([
      'sites[0].meters[0].role: session or circuit',
    ]);
    expect(problems('      - { id: g, model: sdm630, connection: { type: tcp, host: h } }\n')).toEqual([
      'sites[0].meters[0].chargePointId: required',
      'sites[0].meters[0].connectorId: required',
    ]);
  });

  it('names an unknown connection type at its key path once', () => {
    expect(problems(meter('a', '{ type: udp, host: h }'))).toEqual([
      "sites[0].meters[0].connection.type: Invalid discriminator value. Expected 'tcp' | 'rtu' | 'rtuovertcp'",
    ]);
  });

  it('check-config exits 2 naming the key path', async () => {
    const site = tempSiteForTest();
    writeFileSync(
      site.configPath,
      `dataDir: ${site.dataDir}\nsites:\n  - id: s1\n    meters:\n${meter('a', '{ type: rtu, device: /dev/ttyUSB0 }')}${meter('b', '{ type: rtu, device: /dev/ttyUSB0 }')}`,
    );
    const result = await runCli(['check-config', '--config', site.configPath]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `${site.configPath}: sites[0].meters[1].connection.unitId: unit 1 on rtu:/dev/ttyUSB0 is already used by another meter`,
    );
  });
});
