import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { METER_MODELS } from '../../src/modbus/index.js';
import type { StatusSnapshot } from '../../src/status-page/index.js';
import { readStatusScript } from '../../src/status-page/page-assets.js';
import { CHROMIUM, chromiumMissing } from '../support/chromium.js';
import { runCli } from '../support/cli.js';
import { CP001, startTestDaemon, type TestDaemon } from '../support/daemon.js';
import { MeterSimulator } from '../support/meter-simulator.js';
import type { SimulatedStation } from '../support/station.js';

const SECRET_TAG = 'TAG-NOT-FOR-EYES-42';

describe.skipIf(chromiumMissing)('status page in headless Chromium', () => {
  let browser: Browser;
  let test: TestDaemon;
  let httpPort: number;
  let meter: MeterSimulator;

  beforeAll(async () => {
    browser = await chromium.launch(CHROMIUM);
    meter = await MeterSimulator.tcp({ units: { 3: METER_MODELS.sdm630 } });
    await meter.set(3, { energyKWh: 1234.5, currentA: [0, 0, 0], powerW: 0 });
    test = await startTestDaemon({
      sites: [
        {
          id: 's1',
          stations: [CP001],
          meters: [
            {
              id: 'meter-1',
              chargePointId: 'MB-1',
              connectorId: 1,
              model: 'sdm630',
              connection: { type: 'tcp', host: '127.0.0.1', port: meter.port, unitId: 3 },
              pollIntervalMs: 200,
              detection: { offlineAfterS: 2 },
              idTag: 'MODBUS-TAG-SECRET',
            },
          ],
          webhooks: [
            {
              id: 'partner-a',
              url: 'http://user:pw@127.0.0.1:9/webhook/events',
              auth: { type: 'token', token: 'static-token-secret' },
            },
          ],
        },
      ],
    });
    httpPort = test.daemon.httpPort;
  });

  /** A browser page and a station for the running test, closed when it finishes (the daemon and browser are shared). */
  const pageForTest = async (options?: Parameters<Browser['newPage']>[0]): Promise<Page> => {
    const page = await browser.newPage(options);
    onTestFinished(() => page.close());
    return page;
  };
  const connectForTest = async (identity: string): Promise<SimulatedStation> => {
    const station = await test.connect(identity);
    onTestFinished(() => station.close());
    return station;
  };

  afterAll(async () => {
    await test?.stop();
    await browser?.close();
    await meter?.close();
  });

  it('shows a connected station and its connector status changing live, and never an idTag or a secret', async () => {
    const page = await pageForTest();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => msg.type() === 'error' && problems.push(msg.text()));
    await page.goto(`http://127.0.0.1:${httpPort}/`);

    const cp001 = page.locator('#stations tr[data-station="CP001"]');
    await expect.poll(() => cp001.getAttribute('data-online'), { timeout: 15_000 }).toBe('false');

    const station = await connectForTest('CP001');
    await station.boot({ chargePointVendor: 'ACME', chargePointModel: 'Wallbox 22' });
    await station.statusNotification({ connectorId: 1, status: 'Available' });
    const connector = page.locator('#charge-points tr[data-connector="CP001-A/1"]');
    await expect.poll(() => cp001.getAttribute('data-online'), { timeout: 15_000 }).toBe('true');
    expect(await cp001.innerText()).toContain('ACME / Wallbox 22');
    await expect.poll(() => connector.getAttribute('data-status'), { timeout: 15_000 }).toBe('Available');

    // The same page, no reload: the change arrives by itself.
    await station.authorize(SECRET_TAG);
    const transactionId = await station.startTransaction({ connectorId: 1, idTag: SECRET_TAG, meterStart: 1500 });
    await station.statusNotification({ connectorId: 1, status: 'Charging' });
    await expect.poll(() => connector.getAttribute('data-status'), { timeout: 15_000 }).toBe('Charging');
    // Human labels on screen, the OCPP value in the data: a car that pauses reads as such.
    await station.statusNotification({ connectorId: 1, status: 'SuspendedEV' });
    await expect.poll(() => connector.getAttribute('data-status'), { timeout: 15_000 }).toBe('SuspendedEV');
    expect(await connector.innerText()).toContain('Paused by the vehicle');
    expect(await cp001.innerText()).toMatch(/Configured\s+Online/);
    expect(['OK', 'Warning', 'Needs attention']).toContain(await page.locator('#health').innerText());
    expect(await page.locator('#circuits').innerText()).toContain('no circuits configured: load management is off');
    const transaction = page.locator(`#transactions tr[data-transaction="${transactionId}"]`);
    await expect.poll(() => transaction.count(), { timeout: 15_000 }).toBe(1);
    expect(await transaction.innerText()).toMatch(/CP001-A\s+1\s+CP001\s+.*\s+1.5\s+OCPP/);

    // The meter row follows the poller: a car starts drawing 16 A and the page shows it without a reload.
    const meterRow = page.locator('#meters tr[data-meter="meter-1"]');
    expect(await meterRow.innerText()).toContain(`tcp://127.0.0.1:${meter.port}#3`);
    await meter.set(3, { energyKWh: 1234.75, currentA: [16, 16, 16], powerW: 11_000 });
    await expect.poll(() => meterRow.innerText(), { timeout: 15_000 }).toMatch(/1234\.75\s+16 \/ 16 \/ 16\s+11000/);
    expect(await meterRow.getAttribute('data-session')).toMatch(/starting|charging/);
    // Webhook queue health: one executor per (webhook, event type), the partner refusing connections.
    const queues = page.locator('#parts tr[data-part="webhooks"]');
    await expect.poll(() => queues.count(), { timeout: 15_000 }).toBe(4);
    await expect
      .poll(() => queues.filter({ hasText: 'StartTransaction' }).innerText(), { timeout: 15_000 })
      .toMatch(/partner-a\s+StartTransaction\s+yes\s+1\s+1000/);
    const html = await page.content();
    const json = await (await fetch(`http://127.0.0.1:${httpPort}/status.json`)).text();
    for (const hidden of [SECRET_TAG, 'MODBUS-TAG-SECRET', 'static-token-secret', 'user:pw', 'idTag']) {
      expect(html).not.toContain(hidden);
      expect(json).not.toContain(hidden);
    }
    expect(problems).toEqual([]);
  });

  it("shows each station's vendor, model and firmware, and the operation it is answering now", async () => {
    const station = await connectForTest('CP001');
    await station.boot({ chargePointVendor: 'Keba', chargePointModel: 'P30', firmwareVersion: '3.10.16' });
    // The station takes its time over the Reset: the page shows it on its way until the answer comes.
    let answerReset = (): void => undefined;
    const held = new Promise((resolve) => (answerReset = () => resolve({ status: 'Accepted' })));
    station.handle('Reset', () => held);
    const page = await pageForTest();
    await page.goto(`http://127.0.0.1:${httpPort}/`);

    const row = page.locator('#stations tr[data-station="CP001"]');
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain('Keba / P30');
    expect(await row.textContent()).toContain('3.10.16');
    expect(await row.locator('.operation').count()).toBe(0);

    const reset = runCli(['station', 'reset', 'CP001', '--config', test.temp.configPath]);
    await expect
      .poll(() => row.locator('.operation').textContent(), { timeout: 30_000 })
      .toMatch(/^Reset by cli, \d+ s ago$/);
    answerReset();
    expect(await reset).toMatchObject({ code: 0, stdout: 'CP001 Reset: Accepted\n' });
    await expect.poll(() => row.locator('.operation').count(), { timeout: 15_000 }).toBe(0);
  }, 120_000);

  it('serves the page and its script with a strict content security policy, and the data as status.json', async () => {
    const response = await fetch(`http://127.0.0.1:${httpPort}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const script = await fetch(`http://127.0.0.1:${httpPort}/status.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await script.text()).toBe(readStatusScript());
    const snapshot = (await (await fetch(`http://127.0.0.1:${httpPort}/status.json`)).json()) as StatusSnapshot;
    expect(snapshot.sites).toEqual(['s1']);
    expect(snapshot.meters).toMatchObject([
      {
        meterId: 'meter-1',
        siteId: 's1',
        chargePointId: 'MB-1',
        connectorId: 1,
        model: 'sdm630',
        address: `tcp://127.0.0.1:${meter.port}#3`,
        live: { online: true },
      },
    ]);
    expect(Object.keys(snapshot.parts)).toContain('ocpp');
    // No circuits in this config: load management is off, and says so (test/status-page/load-chart.test.ts has one).
    expect(snapshot.load).toBeNull();
  });

  it('fits a 390 px phone without sideways scrolling; a pending station shows the command that pairs it; an offline meter shows its last values as stale', async () => {
    const page = await pageForTest({ viewport: { width: 390, height: 844 } });
    await page.goto(`http://127.0.0.1:${httpPort}/`);
    const station = await connectForTest('CP-NEW');
    expect(await station.boot()).toMatchObject({ status: 'Pending' });
    const pending = page.locator('#stations tr[data-station="CP-NEW"]');
    await expect.poll(() => pending.count(), { timeout: 15_000 }).toBe(1);
    expect(await pending.innerText()).toContain('Waiting for pairing chargegate station pair CP-NEW');

    const meterRow = page.locator('#meters tr[data-meter="meter-1"]');
    await meter.setOnline(3, false);
    try {
      await expect.poll(() => meterRow.innerText(), { timeout: 15_000 }).toMatch(/Offline[\s\S]*\(stale\)/);
      expect(await meterRow.locator('.stale').count()).toBe(3);
    } finally {
      await meter.setOnline(3, true);
    }
    // Wide tables scroll inside their own box; the page itself is no wider than the phone.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
  });

  it('says so when the daemon cannot be reached, and keeps the last data on screen', async () => {
    const page = await pageForTest();
    await page.goto(`http://127.0.0.1:${httpPort}/`);
    await expect.poll(() => page.locator('#freshness').innerText(), { timeout: 15_000 }).toContain('live, updated');
    await page.route('**/status.json', (route) => route.abort());
    await expect
      .poll(() => page.locator('#freshness').innerText(), { timeout: 15_000 })
      .toContain('cannot reach chargegate');
    expect(await page.locator('#stations tr[data-station="CP001"]').count()).toBe(1);
  });
});
