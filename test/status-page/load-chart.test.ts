import { chromium, type Page } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PHASES } from '../../src/load/index.js';
import { METER_MODELS } from '../../src/modbus/index.js';
import { FAST_LOAD, meteredCircuitSite, OFFLINE_AFTER_S } from '../load/metered-circuit.js';
import { CHROMIUM, chromiumMissing } from '../support/chromium.js';
import { daemonForTest } from '../support/daemon.js';
import { MeterSimulator } from '../support/meter-simulator.js';

/** The page polls every 2 s and the meter is polled every 200 ms; the margin is for a loaded machine. */
const WITHIN_MS = 15_000;

interface Chart {
  scaleA: number;
  height: number;
  /** Per line (L1, L2, L3, limit): its stretches, each a list of [x, amperes]. */
  lines: Record<string, Array<Array<[number, number]>>>;
}

/** A circuit's chart as drawn: each path's points, read back to amperes through the chart's scale. */
async function chartOf(page: Page, circuitId: string): Promise<Chart> {
  const svg = page.locator(`#circuits svg.chart[data-circuit="${circuitId}"]`);
  const scaleA = Number(await svg.getAttribute('data-scale-a'));
  const height = Number((await svg.getAttribute('viewBox'))?.split(' ')[3]);
  const toA = (y: number) => ((height - y) / height) * scaleA;
  const lines: Chart['lines'] = {};
  const paths: Array<[string, string]> = [
    ...PHASES.map((p): [string, string] => [p, `path[data-phase="${p}"]`]),
    ['limit', 'path.limit'],
  ];
  for (const [name, selector] of paths) {
    const d = (await svg.locator(selector).getAttribute('d')) ?? '';
    lines[name] = d
      .split('M')
      .filter((stretch) => stretch.trim() !== '')
      .map((stretch) =>
        [...stretch.matchAll(/(-?[\d.]+) (-?[\d.]+)/g)].map((m): [number, number] => [Number(m[1]), toA(Number(m[2]))]),
      );
  }
  return { scaleA, height, lines };
}

/** The amperes a line shows, rounded to 0.5 A (the path's coordinates carry a tenth of a pixel). */
const levels = (stretches: Array<Array<[number, number]>> | undefined): number[] => [
  ...new Set((stretches ?? []).flat().map(([, a]) => Math.round(a * 2) / 2)),
];

describe.skipIf(chromiumMissing)(
  'the status page shows the circuits (docs/configuration/circuits.md#circuits-load-management)',
  () => {
    it('per circuit its limit, phases and headroom, the managed connectors, and a live chart against the limit', async () => {
      const browser = await chromium.launch(CHROMIUM);
      onTestFinished(() => browser.close());
      const sim = await MeterSimulator.tcp({ units: { 1: METER_MODELS.sdm630 } });
      onTestFinished(() => sim.close());
      await sim.set(1, { energyKWh: 1, currentA: [5, 5, 5], powerW: 3_450 });
      const t = await daemonForTest({ sites: [meteredCircuitSite(sim.port)], ...FAST_LOAD });

      const page = await browser.newPage();
      const problems: string[] = [];
      // A CSP violation (an inline style, say) is a console error.
      page.on('pageerror', (err) => problems.push(err.message));
      page.on('console', (msg) => msg.type() === 'error' && problems.push(msg.text()));
      await page.goto(`http://127.0.0.1:${t.daemon.httpPort}/`);
      const main = page.locator('#circuits .circuit[data-circuit="main"]');
      await expect.poll(() => main.count(), { timeout: WITHIN_MS }).toBe(1);
      expect(await main.innerText()).toMatch(/main meter grid\s+site s1 · limit 40\.0 A per phase · headroom 35\.0 A/);

      // The meter reads the other load alone: the cars draw nothing, so what their stations report when asked after a
      // raise (TriggerMessage MeterValues) agrees with it.
      const [cp001, cp002] = [
        await t.connect('CP001', undefined, { carDemandA: 0 }),
        await t.connect('CP002', undefined, { carDemandA: 0 }),
      ];
      await cp001.boot();
      await cp002.boot();
      await cp001.startTransaction({ connectorId: 1, idTag: 'TAG-1' });
      await cp002.startTransaction({ connectorId: 1, idTag: 'TAG-2' });
      const first = page.locator('#circuits tr[data-connector="CP001-A/1"]');
      await expect
        .poll(() => first.innerText(), { timeout: WITHIN_MS })
        .toMatch(/^CP001-A\/1\s+CP001\s+main\s+Sharing\s+16\.0/);
      expect(await first.getAttribute('data-state')).toBe('sharing');
      // Without a meter of its own the garage's chart shows what must fit its limit: other load plus what is allowed.
      const garage = page.locator('#circuits .circuit[data-circuit="garage"]');
      await expect
        .poll(() => garage.locator('path[data-phase="L1"]').getAttribute('data-latest'), { timeout: WITHIN_MS })
        .toBe('10');
      expect(await garage.innerText()).toContain('other load + allowed (no meter), last 5 minutes, 0 to 25 A');
      expect(await garage.locator('tr[data-phase="L2"]').innerText()).toMatch(/^L2\s+0\.0\s+10\.0$/);

      // Once the raised cars' stations have reported (asked 5 s after the raise), a step is all other load.
      await expect.poll(() => first.innerText(), { timeout: WITHIN_MS + 5_000 }).toMatch(/Sharing\s+16\.0\s+0\.0/);
      // The meter's readings over time: 5 A for a while, then a step to 25 A on L2, below the 40 A limit.
      await expect
        .poll(async () => levels((await chartOf(page, 'main')).lines.L2), { timeout: WITHIN_MS })
        .toEqual([5]);
      await sim.set(1, { currentA: [20, 25, 20] });
      const l2 = main.locator('path[data-phase="L2"]');
      await expect.poll(() => l2.getAttribute('data-latest'), { timeout: WITHIN_MS }).toBe('25');
      const chart = await chartOf(page, 'main');
      expect(levels(chart.lines.L2)).toEqual([5, 25]);
      expect(levels(chart.lines.L1)).toEqual([5, 20]);
      expect(levels(chart.lines.limit)).toEqual([40]);
      // Time runs left to right, and the limit and the latest reading fit under the top.
      const xs = chart.lines.L2![0]!.map(([x]) => x);
      expect(xs).toEqual([...xs].sort((a, b) => a - b));
      expect(chart.scaleA).toBeGreaterThan(40);
      expect(await main.innerText()).toContain('most loaded: L2 25.0 A');
      expect(await main.locator('tr[data-phase="L2"]').innerText()).toMatch(/^L2\s+25\.0\s+25\.0\s+/);

      // A lost meter is a gap in the lines, and says so; the lines go on when it answers again.
      await sim.setOnline(1, false);
      await expect
        .poll(() => main.locator('h3').innerText(), { timeout: WITHIN_MS + OFFLINE_AFTER_S * 1000 })
        .toBe('main meter grid lost: fail-safe');
      await expect.poll(() => first.getAttribute('data-state'), { timeout: WITHIN_MS }).toBe('failsafe');
      await sim.setOnline(1, true);
      await expect.poll(() => main.locator('h3').innerText(), { timeout: WITHIN_MS }).toBe('main meter grid');
      await expect.poll(async () => (await chartOf(page, 'main')).lines.L2!.length, { timeout: WITHIN_MS }).toBe(2);
      expect((await chartOf(page, 'main')).lines.limit).toHaveLength(1);

      // On a phone the chart shrinks to fit: the page never scrolls sideways.
      const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
      await phone.goto(`http://127.0.0.1:${t.daemon.httpPort}/`);
      await expect.poll(() => phone.locator('#circuits svg.chart').count(), { timeout: WITHIN_MS }).toBe(2);
      expect(await phone.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      expect(problems).toEqual([]);
    }, 120_000);
  },
);
