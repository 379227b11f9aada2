import { describe, expect, it } from 'vitest';
import { runCli, runCliJson } from '../support/cli.js';
import { daemonForTest, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';
import { expectOnlyAfter, MovableLoadClock } from '../support/load-clock.js';
import { charging, inBrussels, limitsOn, RAISE_AFTER_S, temporaryLimitSite } from './temporary-limit-site.js';

const HOUR_MS = 3_600_000;
const WITHIN_MS = 5_000;

describe('chargegate load limit (docs/configuration/circuits.md#circuits-load-management)', () => {
  it(
    'a limit set from the CLI is noticed by the running daemon within ocpp.changePollMs and lowers the stations; --clear ends it',
    async () => {
      // Raises wait on this clock (clock.meanwhile), not on real time.
      const clock = new MovableLoadClock();
      const t = await daemonForTest(temporaryLimitSite(), { loadClock: clock });
      const config = ['--config', t.temp.configPath];
      const [a, b] = [await t.connect('CP001'), await t.connect('CP002')];
      const limits = limitsOn(clock, a, b);
      await charging(a, b);
      await expect.poll(clock.meanwhile(limits), { timeout: WITHIN_MS }).toEqual([12, 12]);

      const until = inBrussels(Date.now() + HOUR_MS);
      const set = await runCliJson(['load', 'limit', 'main', '--current', '16', '--until', until, ...config]);
      expect(set).toMatchObject({
        code: 0,
        data: {
          siteId: 's1',
          circuitId: 'main',
          configuredMaxCurrentA: 24,
          temporaryLimit: { maxCurrentA: 16, until, setBy: 'cli' },
          effectiveMaxCurrentA: 16,
        },
      });
      // changePollMs is 200 ms here; a step follows at once.
      await expect.poll(limits, { timeout: 2_000 }).toEqual([8, 8]);

      const cleared = await runCli(['load', 'limit', 'main', '--clear', ...config]);
      expect(cleared).toMatchObject({ code: 0, stdout: expect.stringMatching(/^main: temporary limit ended/) });
      await expectOnlyAfter(clock, RAISE_AFTER_S * 1000, limits, [12, 12], WITHIN_MS);

      // Nothing left to clear: exit 1, like any other thing named that does not exist.
      const again = await runCliJson(['load', 'limit', 'main', '--clear', ...config]);
      expect(again).toMatchObject({
        code: 1,
        data: { error: 'circuit "main" has no temporary limit in force' },
      });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'bad input is exit 2 naming the option; an unknown circuit is exit 1; nothing is written',
    async () => {
      const t = await daemonForTest(temporaryLimitSite());
      const config = ['--config', t.temp.configPath];
      const future = inBrussels(Date.now() + HOUR_MS);
      const cases: Array<[args: string[], code: number, stderr: RegExp]> = [
        [['--current', '0', '--until', future], 2, /--current <A>.*above 0/],
        [['--current', 'ten', '--until', future], 2, /--current <A>.*number of amperes/],
        [['--current', '1e3', '--until', future], 2, /--current <A>/],
        [['--current', '20000', '--until', future], 2, /--current <A>.*at most 10000/],
        [['--current', '0.000000001', '--until', future], 2, /--current <A>.*at least 0\.1 A/],
        [['--current', '16.25', '--until', future], 2, /--current <A>.*whole tenths of an ampere/],
        [['--current', '16', '--until', '9999-12-31T23:59:59Z'], 2, /--until: .*at most 366 days from now/],
        [['--current', '16'], 2, /--until: required with --current/],
        [['--until', future], 2, /--current: required with --until/],
        [[], 2, /give --current A and --until ISO .* or --clear/],
        [['--current', '16', '--until', inBrussels(Date.now() - 60_000)], 2, /--until: .*must be in the future/],
        [['--current', '16', '--until', '2999-01-01T00:00:00'], 2, /--until: .*an offset/],
        [['--current', '16', '--until', future, '--clear'], 2, /--clear.*cannot be used with/],
      ];
      const results = await Promise.all(cases.map(([args]) => runCli(['load', 'limit', 'main', ...args, ...config])));
      results.forEach((result, i) => {
        const [args, code, stderr] = cases[i]!;
        expect(result.code, args.join(' ')).toBe(code);
        expect(result.stderr, args.join(' ')).toMatch(stderr);
      });
      const unknown = await runCli(['load', 'limit', 'nope', '--current', '16', '--until', future, ...config]);
      expect(unknown).toMatchObject({
        code: 1,
        stderr: 'chargegate: no circuit "nope" in the config (circuits: main, garage)\n',
      });
      expect(t.db.prepare('SELECT COUNT(*) FROM circuit_temporary_limits').pluck().get()).toBe(0);

      // A decimal current and a limit above the configured one are fine: it only lowers, so nothing changes.
      const above = await runCli(['load', 'limit', 'garage', '--current', '20.5', '--until', future, ...config]);
      expect(above).toMatchObject({ code: 0, stdout: expect.stringContaining('nothing changes') });
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
