import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../src/config/index.js';
import { ROOT } from '../support/cli.js';
import { baseConfig } from '../support/temp-site.js';
import { daemonForTest, eventually } from '../support/daemon.js';
import { meterHealth } from './harness.js';

/** `npm run simulate:meter`: the config entry it prints pastes into a site as it is, and the daemon reads the meter. */
describe('scripts/meter-simulator.ts', () => {
  it('prints a meters entry that a site takes unchanged, and answers the daemon over Modbus TCP', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(ROOT, 'scripts/meter-simulator.ts'),
        '--port',
        '0',
        '--idle-s',
        '1',
        '--charge-s',
        '1',
      ],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    onTestFinished(() => void child.kill('SIGKILL'));
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (line) => lines.push(line));
    const entry = await eventually(
      () => {
        const at = lines.findIndex((l) => l.includes('config entry (paste under a site):'));
        return at >= 0 && lines.length >= at + 3 ? lines.slice(at + 1, at + 3) : undefined;
      },
      30_000,
      'the config entry',
    );

    // Pasted under a site entry (four spaces deep, as in config/default.yaml), the file parses.
    const yaml = ['sites:', '  - id: s1', '    stations: []', ...entry].join('\n');
    const { meters } = (parse(yaml) as { sites: Array<{ meters: unknown[] }> }).sites[0]!;
    expect(meters).toHaveLength(1);
    const config = parseConfig(
      JSON.stringify({ ...baseConfig('/tmp/x'), sites: [{ id: 's1', stations: [], meters, webhooks: [] }] }),
    );
    expect(config.sites[0]!.meters[0]).toMatchObject({ id: 'meter-sim', chargePointId: 'MB-SIM', model: 'sdm630' });

    const daemon = await daemonForTest({ sites: [{ id: 's1', stations: [], meters, webhooks: [] }] });
    await eventually(
      async () => ((await meterHealth(daemon.daemon.httpPort, 'meter-sim'))?.readings ?? 0) >= 2,
      20_000,
      'readings from the simulator',
    );
    expect((await meterHealth(daemon.daemon.httpPort, 'meter-sim'))?.lastReading?.energyKWh).toBeGreaterThanOrEqual(
      1000,
    );
  }, 60_000);
});
