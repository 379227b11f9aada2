import { chromium } from 'playwright-core';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CHROMIUM, chromiumMissing } from '../support/chromium.js';
import { TestCsms } from '../support/csms.js';
import { daemonForTest, eventually, PROCESS_TEST_TIMEOUT_MS } from '../support/daemon.js';

/** The page polls every 2 s; the margin is for a loaded machine. */
const WITHIN_MS = 15_000;

describe.skipIf(chromiumMissing)(
  'the status page shows the uplink (docs/design/uplink.md#uplink-what-the-csms-sees)',
  () => {
    it(
      "per station its link's state, the messages waiting and their age, dropped ones and the health, live",
      async () => {
        const browser = await chromium.launch(CHROMIUM);
        onTestFinished(() => browser.close());
        const csms = await TestCsms.startForTest();
        const t = await daemonForTest({ upstream: { timeoutMs: 2000, csms: { url: csms.url, securityProfile: 0 } } });
        const station = await t.connect();
        await station.boot();
        await eventually(() => csms.isConnected('CP001'), 30_000, 'the link');

        const page = await browser.newPage();
        const problems: string[] = [];
        page.on('pageerror', (err) => problems.push(err.message));
        await page.goto(`http://127.0.0.1:${t.daemon.httpPort}/`);
        const block = page.locator('#parts .part', { hasText: 'Uplink to the CSMS' });
        const row = block.locator('tr[data-part="upstream"]');
        await expect.poll(() => row.innerText(), { timeout: WITHIN_MS }).toMatch(/CP001\s+yes\s+Accepted\s+0\s+0\s+OK/);
        expect(await block.locator('th').allInnerTexts()).toEqual([
          'Station',
          'Connected',
          'State',
          'Queued messages',
          'Oldest queued',
          'Dropped',
          'Health',
        ]);
        expect(await block.innerText()).toContain(`Address: ${csms.url}`);

        // The CSMS away: the session waits in the queue, with the age of its oldest message.
        await csms.cutOff();
        await station.startTransaction({ connectorId: 1, idTag: 'TAG-1', meterStart: 100 });
        await expect
          .poll(() => row.innerText(), { timeout: WITHIN_MS })
          .toMatch(/CP001\s+no\s+Connecting\s+1\s+.+\s+0\s+OK/);

        csms.restore();
        await expect.poll(() => row.innerText(), { timeout: 30_000 }).toMatch(/CP001\s+yes\s+Accepted\s+0\s+0\s+OK/);
        expect(problems).toEqual([]);
      },
      PROCESS_TEST_TIMEOUT_MS,
    );
  },
);
